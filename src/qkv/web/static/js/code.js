// The Part 2 code exercise: a CodeMirror editor over the server-rendered textarea, a Run button and
// Ctrl/⌘+Enter that send the code to the sandboxed grader, and the per-test results it sends back.
import { ApiError, postJson } from "./api.js";
import { el } from "./format.js";
import { renderGradeResult } from "./results.js";

async function loadEditorModule() {
  try {
    return await import("./../vendor/editor.js");
  } catch {
    return null;
  }
}

/**
 * Wire one `.code-exercise`.
 *
 * @param {HTMLElement} box
 * @param {{api: string, progress: ReturnType<import("./progress.js").createProgressStore>}} ctx
 */
export async function mountCodeExercise(box, ctx) {
  const exerciseId = box.dataset.exerciseId;
  const textarea = box.querySelector("textarea");
  const button = box.querySelector("button.run-code");
  const results = box.querySelector(".grade-results");
  if (!exerciseId || !textarea || !button || !results || box.dataset.mounted) return;
  box.dataset.mounted = "yes";
  const functions = (box.dataset.functions ?? "").split(/\s+/).filter(Boolean);

  const saved = ctx.progress.get().code?.[exerciseId];
  if (saved && typeof saved.source === "string") textarea.value = saved.source;
  if (saved && saved.result) renderGradeResult(results, saved.result, functions);

  let busy = false;
  let editor = null;
  const currentCode = () => (editor ? editor.getValue() : textarea.value);

  async function run() {
    if (busy) return;
    busy = true;
    box.setAttribute("aria-busy", "true");
    button.setAttribute("aria-disabled", "true");
    const label = button.textContent;
    button.textContent = "Running…";
    results.classList.add("is-busy");
    const status = el("p", { class: "grade-running" }, "Running the tests on your code…");
    results.replaceChildren(status);
    try {
      const reply = await postJson(`${ctx.api}/code`, { exercise_id: exerciseId, code: currentCode() });
      renderGradeResult(results, reply.result, functions);
      ctx.progress.set(reply.progress);
    } catch (error) {
      results.classList.remove("is-busy");
      const message = error instanceof ApiError ? error.message : "Your code could not be sent to the grader.";
      results.replaceChildren(el("p", { class: "grade-message is-error" }, message));
    } finally {
      busy = false;
      box.removeAttribute("aria-busy");
      button.removeAttribute("aria-disabled");
      button.textContent = label;
    }
  }

  button.addEventListener("click", run);
  // Until (or if never) the editor loads, Ctrl/⌘+Enter in the plain textarea runs the code too.
  textarea.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      run();
    }
  });

  const module = await loadEditorModule();
  if (module && typeof module.mountEditor === "function") {
    const label = box.querySelector(`label[for="${textarea.id}"]`);
    editor = module.mountEditor(textarea, {
      onRun: run,
      label: label ? label.textContent.trim() : "Python code editor",
      stylesheet: new URL("../editor.css", import.meta.url).href,
    });
    box.classList.add("has-editor");
    // The label pointed at the textarea, which is now hidden: clicking it should focus the editor instead.
    if (label) label.addEventListener("click", () => editor.focus());
  }
}
