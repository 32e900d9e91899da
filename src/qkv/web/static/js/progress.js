// @ts-check
// The learner's progress document (PROGRESS in the API) and the indicator of which parts are done.

/** Hold the latest PROGRESS document and tell listeners when the server sends a newer one. */
export function createProgressStore(initial) {
  let current = initial ?? { exercises: {}, code: {}, parts: [], done: 0, total: 0 };
  const listeners = [];
  return {
    get: () => current,
    set(next) {
      if (!next || typeof next !== "object") return;
      current = next;
      for (const listener of listeners) listener(current);
    },
    onChange(listener) {
      listeners.push(listener);
    },
  };
}

/** Read the PROGRESS JSON the server embedded in the page (null when missing or unreadable). */
export function readEmbeddedProgress(doc = document) {
  const node = doc.getElementById("progress-data");
  if (!node) return null;
  try {
    return JSON.parse(node.textContent ?? "null");
  } catch {
    return null;
  }
}

/**
 * Update the progress panel (summary line and one row per part) from a PROGRESS document.
 * The server decides what is done (`done`, `total` and each part's `done`, `total`, `complete`);
 * this only shows those numbers.
 */
export function renderProgressIndicator(progress, doc = document) {
  const summary = doc.getElementById("progress-summary");
  if (summary && typeof progress.done === "number" && typeof progress.total === "number") {
    const text = `${progress.done} of ${progress.total} exercises done`;
    if (summary.textContent.trim() !== text) summary.textContent = text;
  }
  const complete = doc.getElementById("lesson-complete");
  if (complete && typeof progress.done === "number" && typeof progress.total === "number") {
    complete.hidden = !(progress.total > 0 && progress.done >= progress.total);
  }
  /** @type {NodeListOf<HTMLElement>} */
  const partRows = doc.querySelectorAll(".progress-part[data-part]");
  const rows = new Map([...partRows].map((row) => [row.dataset.part, row]));
  for (const part of Array.isArray(progress.parts) ? progress.parts : []) {
    const row = rows.get(part.id);
    if (!row) continue;
    row.classList.toggle("is-done", Boolean(part.complete));
    const status = row.querySelector(".part-status");
    if (status) status.textContent = part.complete ? "✓ done" : `${part.done} of ${part.total}`;
  }
}
