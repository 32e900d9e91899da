// @ts-check
// The Part 2 code exercise: a CodeMirror editor over the server-rendered textarea, a Run button and
// Ctrl/⌘+Enter that send the code to the sandboxed grader, and the per-test results it sends back.
// The editor's text is saved on the server as the learner types (a draft), and "Stuck?" gives hints
// one at a time and, once earned, the reference solution.
import { ApiError, getJson, postJson, putJson } from "./api.js";
import { el } from "./format.js";
import { renderGradeResult } from "./results.js";

const DRAFT_DELAY_MS = 800; // save this long after the last keystroke
const KEYS_HELP =
  "Tab indents. To leave the editor with the keyboard, press Escape, then Tab (or Shift+Tab). " +
  "Ctrl+Enter (⌘+Enter) runs the tests.";

async function loadEditorModule() {
  try {
    return await import("./../vendor/editor.js");
  } catch {
    return null;
  }
}

/**
 * Keep the start of every line in view. The line numbers are a gutter that sticks to the left edge of the
 * editor's scroller, over the code; when the browser scrolls the editing area into view (as it does for a
 * fragment, a focus or a tool bringing it on screen), it aligns the code's left edge with the scroller's,
 * which on a narrow phone scrolls the code sideways by the gutter's width and hides each line's start and
 * indentation under the numbers. A scroll padding as wide as the gutter makes the browser stop at the
 * code's true start; it follows the gutter's width (more lines, wider numbers).
 *
 * @param {{scrollDOM: HTMLElement, dom: HTMLElement}} view  the CodeMirror view
 */
function keepLineStartsInView(view) {
  const scroller = view.scrollDOM;
  const gutters = view.dom.querySelector(".cm-gutters");
  const pad = () => {
    scroller.style.scrollPaddingLeft = gutters ? `${gutters.getBoundingClientRect().width}px` : "";
  };
  pad();
  scroller.scrollLeft = 0; // the first paint starts at column 0
  if (gutters && "ResizeObserver" in window) new ResizeObserver(pad).observe(gutters);
}

// Every code exercise with unsaved text; one beforeunload listener asks before leaving.
const unsaved = new Set();
window.addEventListener("beforeunload", (event) => {
  if (unsaved.size === 0) return;
  event.preventDefault();
  event.returnValue = ""; // older browsers need it to show their "Leave site?" dialog
});

/**
 * Save a code exercise's text a moment after each edit, and say so next to the Run button.
 *
 * @returns {{changed: (text: string) => void, flush: () => Promise<void>, ran: (text: string) => void}}
 */
function draftSaver(api, exerciseId, status, initial) {
  // What was last saved, what waits to be, the save timer and the save on its way.
  const draft = { api, exerciseId, status, key: `${api}#${exerciseId}`, saved: initial, pending: null, timer: null, inFlight: null };
  return {
    changed(text) {
      draft.pending = text;
      if (text === draft.saved) {
        unsaved.delete(draft.key);
        return;
      }
      unsaved.add(draft.key);
      status.textContent = "Unsaved changes…";
      if (draft.timer !== null) clearTimeout(draft.timer);
      draft.timer = setTimeout(() => saveDraft(draft), DRAFT_DELAY_MS);
    },
    async flush() {
      if (draft.timer !== null) {
        clearTimeout(draft.timer);
        await saveDraft(draft);
      } else if (draft.inFlight) {
        await draft.inFlight.catch(() => {});
      }
    },
    // The grader's copy is saved with the run itself.
    ran(text) {
      draft.saved = text;
      // Edits made while the tests ran are still waiting for their own save (the timer stays).
      if (draft.pending === null || draft.pending === text) {
        if (draft.timer !== null) clearTimeout(draft.timer);
        draft.timer = null;
        unsaved.delete(draft.key);
        status.textContent = "Saved with your run.";
      }
    },
  };
}

/** Save the text that waits, unless it is saved already, and say how it went. */
async function saveDraft(draft) {
  draft.timer = null;
  if (draft.pending === null || draft.pending === draft.saved) {
    unsaved.delete(draft.key);
    return;
  }
  const text = draft.pending;
  draft.status.textContent = "Saving your draft…";
  try {
    draft.inFlight = putJson(`${draft.api}/draft`, { exercise_id: draft.exerciseId, code: text });
    await draft.inFlight;
    draft.saved = text;
    draft.status.textContent = "Draft saved.";
    if (draft.pending === draft.saved) unsaved.delete(draft.key);
  } catch (error) {
    draft.status.textContent =
      error instanceof ApiError ? `Your draft could not be saved: ${error.message}` : "Your draft could not be saved.";
  } finally {
    draft.inFlight = null;
  }
}

/** "Stuck?"'s hints: one at a time ("Hint 1 of 3"), each asked of the server once earned (the page holds no
 * hint's text); the note says what opens the next one, as PROGRESS says. */
function mountHints(help, ctx, exerciseId) {
  const total = Number(help.dataset.hints || 0);
  const list = help.querySelector("ol.code-hints");
  const note = help.querySelector(".hint-note");
  if (!total || !list) return () => {};
  let shown = 0;
  let earned = 0;
  const next = el("button", { type: "button", class: "next-hint secondary", hidden: "" });
  function update() {
    next.hidden = shown >= Math.min(total, earned);
    next.textContent = `Show hint ${shown + 1} of ${total}`;
  }
  list.insertAdjacentElement("afterend", next);
  next.addEventListener("click", async () => {
    const number = shown + 1;
    next.disabled = true;
    try {
      const reply = await getJson(`${ctx.api}/hints/${encodeURIComponent(exerciseId)}/${number}`);
      const item = el("li", { class: "code-hint", tabindex: "-1" }, el("span", { class: "hint-count" }, `Hint ${number} of ${total}:`), " ");
      item.insertAdjacentHTML("beforeend", reply.html); // the lesson's own text, rendered by the server
      list.append(item);
      shown = number;
      update();
      item.focus();
    } catch (error) {
      list.append(el("li", { class: "is-error" }, error instanceof ApiError ? error.message : "The hint could not be loaded."));
    } finally {
      next.disabled = false;
    }
  });
  // Called with each PROGRESS document: the server decides which hints are earned.
  return (progress) => {
    const hints = progress?.code?.[exerciseId]?.hints;
    if (!hints) return;
    earned = Number(hints.open || 0);
    if (note && hints.next) note.textContent = hints.next;
    update();
  };
}

/** "Stuck?": the hints, then the reference solution once the server opens it. */
function mountHelp(box, ctx, exerciseId) {
  const help = box.querySelector("details.code-help");
  if (!help) return () => {};
  const updateHints = mountHints(help, ctx, exerciseId);
  const note = help.querySelector(".solution-note");
  if (!note) return updateHints;
  const button = el("button", { type: "button", class: "show-solution secondary", hidden: "" }, "Show the reference solution");
  const place = el("div", { class: "solution-place", "aria-live": "polite" });
  note.insertAdjacentElement("afterend", button);
  button.insertAdjacentElement("afterend", place);
  button.addEventListener("click", async () => {
    try {
      const reply = await getJson(`${ctx.api}/solution/${encodeURIComponent(exerciseId)}`);
      place.replaceChildren(
        el("p", {}, "One way to write it (yours may differ and still be right):"),
        el("pre", { class: "reference-solution", tabindex: "0" }, el("code", {}, reply.solution)),
      );
      button.hidden = true;
    } catch (error) {
      place.replaceChildren(el("p", { class: "is-error" }, error instanceof ApiError ? error.message : "The solution could not be loaded."));
    }
  });
  // Called with each PROGRESS document: the server decides when the solution is open.
  return (progress) => {
    updateHints(progress);
    const open = Boolean(progress?.code?.[exerciseId]?.solution?.open);
    if (open && button.hidden && !place.querySelector("pre")) {
      button.hidden = false;
      // Help given is counted: say so before the learner reads it (once solved, reading it costs nothing).
      note.textContent = progress?.exercises?.[exerciseId]?.done
        ? "You have earned the reference solution."
        : "You have earned the reference solution. Reading it before you solve the exercise is recorded: a solve after it is marked as one after the solution, for your instructor and in the gradebook.";
    }
  };
}

/**
 * While a run waits for its verdict: about once a second, say how long it has taken and, while it is still
 * in line (every grader busy), its place in line and when it may be done at the line's measured pace, with
 * a Cancel button that takes it out. A program that outgrew its first short run finishes after everyone
 * else's first run: the page says so. The next poll is asked for only a second after the last one ended,
 * so a slow server never gets more than one poll a second from a learner.
 */
function watchQueue(ctx, status, results) {
  // retry: while the page waits to send the program again, {until, sentence, done}.
  const watch = { status, results, started: Date.now(), position: null, estimate: null, state: null, stopped: false, retry: null, timer: null };
  watch.cancel = cancelButton(ctx, watch);
  const tick = async () => {
    await pollQueue(ctx, watch);
    if (!watch.stopped) watch.timer = setTimeout(tick, POLL_EVERY_MS);
  };
  watch.timer = setTimeout(tick, POLL_EVERY_MS);
  return {
    stop() {
      watch.stopped = true;
      clearTimeout(watch.timer);
      watch.cancel.remove();
      if (watch.retry) watch.retry.done(false);
    },
    /**
     * Say the server's sentence and wait its Retry-After, counting down; resolves true to send again,
     * false when the learner pressed Cancel.
     */
    waitToRetry(seconds, sentence) {
      return new Promise((resolve) => {
        const timeout = setTimeout(() => finish(true), seconds * 1000);
        function finish(again) {
          clearTimeout(timeout);
          watch.retry = null;
          watch.position = null;
          watch.estimate = null;
          resolve(again);
        }
        watch.retry = { until: Date.now() + seconds * 1000, sentence, done: finish };
        showWaiting(watch);
      });
    },
  };
}

const POLL_EVERY_MS = 1000;

/** The Cancel button of a waiting run: it stops a wait to send again, or takes the program out of line. */
function cancelButton(ctx, watch) {
  const cancel = el("button", { type: "button", class: "secondary cancel-run" }, "Cancel");
  cancel.addEventListener("click", async () => {
    if (watch.retry) {
      watch.retry.done(false); // stop waiting: nothing of this learner is in line
      return;
    }
    cancel.setAttribute("aria-disabled", "true");
    try {
      await postJson(`${ctx.api}/code/cancel`, {});
    } catch {
      cancel.removeAttribute("aria-disabled");
    }
  });
  return cancel;
}

/** Say where the run stands: waiting to be sent again, taking longer, running, or in line. */
function showWaiting(watch) {
  const { status, results, cancel, retry, state, position } = watch;
  const seconds = Math.round((Date.now() - watch.started) / 1000);
  if (retry) {
    const left = Math.max(0, Math.ceil((retry.until - Date.now()) / 1000));
    status.textContent = `${retry.sentence} Waiting to send your program again by itself in ${left} s.`;
    if (!cancel.isConnected) results.append(cancel);
  } else if (state === "taking_longer") {
    status.textContent = `Still running — your program is taking longer than most, so it finishes after the other programs waiting for their first run · ${seconds} s.`;
    if (position === null) cancel.remove();
    else if (!cancel.isConnected) results.append(cancel);
  } else if (position === null) {
    status.textContent = `Running the tests on your code… ${seconds} s`;
    cancel.remove();
  } else {
    status.textContent = `Waiting for a free grader (${placeWords(position)})${estimateWords(watch.estimate)} · ${seconds} s. Running again while you wait replaces this program.`;
    if (!cancel.isConnected) results.append(cancel);
  }
}

/** "you are next", or "place 4 in line, 3 programs ahead of yours" (position: programs served first). */
function placeWords(position) {
  if (position === 0) return "you are next";
  return `place ${position + 1} in line, ${position} program${position === 1 ? "" : "s"} ahead of yours`;
}

/** The server's estimate from the line's measured pace, in whole seconds (nothing before it has one). */
function estimateWords(estimate) {
  if (estimate === null) return "";
  return ` — done in about ${Math.max(1, Math.ceil(estimate))} s at the line's pace`;
}

/** One tick: ask the server where the program is in line (not while waiting to send it again), then say so. */
async function pollQueue(ctx, watch) {
  if (watch.stopped) return;
  if (watch.retry) {
    showWaiting(watch);
    return;
  }
  try {
    const reply = await getJson(`${ctx.api}/code/queue`);
    if (!watch.stopped) {
      watch.position = Number.isInteger(reply.position) ? reply.position : null;
      watch.estimate = typeof reply.estimate_s === "number" && Number.isFinite(reply.estimate_s) ? reply.estimate_s : null;
      watch.state = typeof reply.state === "string" ? reply.state : null;
    }
  } catch {
    // The verdict is what matters; a missed position is shown on the next tick.
  }
  if (!watch.stopped) showWaiting(watch);
}

const LONGEST_RETRY_WAIT_S = 600;

/**
 * POST the program; a 429 (this network's share of the grading line is full, or the learner's previous
 * program is still graded) or a 503 with a Retry-After (the whole line full, the server restarting, the
 * database away for a moment) is sent again by itself after the server's Retry-After, while the page says
 * it is waiting and the editor keeps the program: even an overload ends in a verdict. A 503 without one
 * (grading turned off on this server) is shown as it is. Returns null when the learner cancelled the wait.
 */
async function sendProgram(ctx, body, watch) {
  for (;;) {
    try {
      return await postJson(`${ctx.api}/code`, body);
    } catch (error) {
      const waitable = error instanceof ApiError && (error.status === 429 || error.status === 503) && error.retryAfter !== null;
      if (!waitable) throw error;
      const seconds = Math.min(Math.max(error.retryAfter, 1), LONGEST_RETRY_WAIT_S);
      if (!(await watch.waitToRetry(seconds, error.message))) return null;
    }
  }
}

/**
 * Wire one `.code-exercise`: its saved text and result, drafts and help, the Run button and the editor.
 *
 * @param {HTMLElement} box
 * @param {{api: string, progress: ReturnType<import("./progress.js").createProgressStore>}} ctx
 */
export async function mountCodeExercise(box, ctx) {
  const exercise = codeExerciseParts(box, ctx);
  if (!exercise || box.dataset.mounted) return;
  box.dataset.mounted = "yes";
  const saved = ctx.progress.get().code?.[exercise.exerciseId];
  restoreSaved(exercise, saved);
  addDraftsAndHelp(exercise);
  const run = () => runTests(exercise);
  listenForRunsAndEdits(exercise, run);
  const module = await loadEditorModule();
  if (module && typeof module.mountEditor === "function") await mountEditorOver(exercise, module, run, saved);
}

/** The exercise's parts on the page (null when one is missing), and its state: busy, the editor once loaded. */
function codeExerciseParts(box, ctx) {
  const exerciseId = box.dataset.exerciseId;
  const textarea = box.querySelector("textarea");
  const button = box.querySelector("button.run-code");
  const results = box.querySelector(".grade-results");
  if (!exerciseId || !textarea || !button || !results) return null;
  const functions = (box.dataset.functions ?? "").split(/\s+/).filter(Boolean);
  return { box, ctx, exerciseId, textarea, button, results, functions, drafts: null, editor: null, busy: false };
}

/** The newest text wins: the draft (saved as the learner typed), else the last program run, else the starter. */
function restoreSaved(exercise, saved) {
  if (saved && typeof saved.draft === "string") exercise.textarea.value = saved.draft;
  else if (saved && typeof saved.source === "string") exercise.textarea.value = saved.source;
  if (saved && saved.result) renderGradeResult(exercise.results, saved.result, exercise.functions, exercise.exerciseId);
}

/** The draft's status beside the Run button, its saver, and "Stuck?", which follows PROGRESS. */
function addDraftsAndHelp(exercise) {
  const { ctx, exerciseId } = exercise;
  const draftStatus = el("span", { class: "draft-status" });
  exercise.button.insertAdjacentElement("afterend", draftStatus);
  exercise.drafts = draftSaver(ctx.api, exerciseId, draftStatus, exercise.textarea.value);
  const updateHelp = mountHelp(exercise.box, ctx, exerciseId);
  updateHelp(ctx.progress.get());
  ctx.progress.onChange(updateHelp);
}

function currentCode(exercise) {
  return exercise.editor ? exercise.editor.getValue() : exercise.textarea.value;
}

function markLoadError(exercise, result) {
  const { editor } = exercise;
  if (!editor) return;
  editor.clearErrors();
  if (result && result.status === "error" && Number.isInteger(result.line) && result.message) {
    editor.markError(result.line, result.message);
  }
}

/** Send the code to the grader (one run at a time) and show its verdict, or why there is none. */
async function runTests(exercise) {
  const { box, ctx, button, results } = exercise;
  if (exercise.busy) return;
  exercise.busy = true;
  box.setAttribute("aria-busy", "true");
  button.setAttribute("aria-disabled", "true");
  const label = button.textContent;
  button.textContent = "Running…";
  results.classList.add("is-busy");
  const status = el("p", { class: "grade-running", role: "status" }, "Running the tests on your code…");
  results.replaceChildren(status);
  const code = currentCode(exercise);
  const watch = watchQueue(ctx, status, results);
  try {
    await gradeAndShow(exercise, code, watch);
  } catch (error) {
    results.classList.remove("is-busy");
    const message = error instanceof ApiError ? error.message : "Your code could not be sent to the grader.";
    results.replaceChildren(el("p", { class: "grade-message is-error" }, message));
  } finally {
    watch.stop();
    exercise.busy = false;
    box.removeAttribute("aria-busy");
    button.removeAttribute("aria-disabled");
    button.textContent = label;
  }
}

/** The run itself: send the program, wait for its verdict, show it and the new PROGRESS. */
async function gradeAndShow(exercise, code, watch) {
  const { ctx, results, functions } = exercise;
  let reply = await sendProgram(ctx, { exercise_id: exercise.exerciseId, code }, watch);
  if (reply === null) {
    results.classList.remove("is-busy");
    results.replaceChildren(el("p", { class: "grade-message" }, "You stopped waiting; your program was not run."));
    return;
  }
  // With graders on other machines (qkv serve --grading remote) the answer may be 202 before the verdict
  // is written: ask again where it says, which any server answers, until the verdict comes.
  while (reply && !reply.result && typeof reply.poll === "string") reply = await getJson(reply.poll);
  exercise.drafts.ran(code);
  renderGradeResult(results, reply.result, functions, exercise.exerciseId);
  markLoadError(exercise, reply.result);
  ctx.progress.set(reply.progress);
}

/** The Run button, Ctrl/⌘+Enter in the plain textarea, its edits, and a save when the page is left. */
function listenForRunsAndEdits(exercise, run) {
  const { textarea, drafts } = exercise;
  exercise.button.addEventListener("click", run);
  // Until (or if never) the editor loads, Ctrl/⌘+Enter in the plain textarea runs the code too.
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });
  textarea.addEventListener("input", () => {
    if (!exercise.editor) drafts.changed(textarea.value);
  });
  // Leaving through a link on the page: save first, so that nothing typed is lost.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") drafts.flush();
  });
}

/**
 * The CodeMirror editor over the textarea, once its module has loaded. mountEditor resolves when the editor is
 * shown, its stylesheet applied (until then the textarea is the editor, and its edits are saved as drafts).
 */
async function mountEditorOver(exercise, module, run, saved) {
  const { box, textarea, drafts } = exercise;
  const label = box.querySelector(`label[for="${textarea.id}"]`);
  const editor = await module.mountEditor(textarea, {
    onRun: run,
    onChange: (text) => drafts.changed(text),
    label: label ? label.textContent.trim() : "Python code editor",
    keysHelp: KEYS_HELP,
    stylesheet: new URL("../editor.css", import.meta.url).href,
  });
  exercise.editor = editor;
  box.classList.add("has-editor");
  keepLineStartsInView(editor.view);
  // The saved result's line belongs to the program that was run, not to a newer draft.
  if (!saved || typeof saved.draft !== "string" || saved.draft === saved.source) markLoadError(exercise, saved?.result);
  // The label pointed at the textarea, which is now hidden: clicking it should focus the editor instead.
  if (label) label.addEventListener("click", () => editor.focus());
}
