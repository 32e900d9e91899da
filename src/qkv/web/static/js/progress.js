// The learner's progress document (PROGRESS in the API) and the indicator of which parts are done.

/** Hold the latest PROGRESS document and tell listeners when the server sends a newer one. */
export function createProgressStore(initial) {
  let current = initial ?? { exercises: {}, code: {}, done: 0, total: 0 };
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

/** True when the exercise counts as done: a correct answer, or code whose tests all passed. */
export function isDone(progress, exerciseId) {
  const entry = progress.exercises?.[exerciseId];
  if (entry && entry.status === "correct") return true;
  const code = progress.code?.[exerciseId];
  return Boolean(code && code.result && code.result.status === "pass");
}

/** Update the progress panel (summary line and one row per part) from a PROGRESS document. */
export function renderProgressIndicator(progress, doc = document) {
  const summary = doc.getElementById("progress-summary");
  if (summary && typeof progress.done === "number" && typeof progress.total === "number") {
    const text = `${progress.done} of ${progress.total} exercises done`;
    if (summary.textContent.trim() !== text) summary.textContent = text;
  }
  for (const part of doc.querySelectorAll(".progress-part[data-exercises]")) {
    const ids = (part.getAttribute("data-exercises") ?? "").split(/\s+/).filter(Boolean);
    const done = ids.filter((id) => isDone(progress, id)).length;
    const complete = ids.length > 0 && done === ids.length;
    part.classList.toggle("is-done", complete);
    const status = part.querySelector(".part-status");
    if (status) status.textContent = complete ? "✓ done" : `${done} of ${ids.length}`;
  }
}
