// The Part 2 code exercise: a CodeMirror editor over the server-rendered textarea, a Run button and
// Ctrl/⌘+Enter that send the code to the sandboxed grader, and the per-test results it sends back.
import { ApiError, postJson } from "./api.js";
import { el } from "./format.js";

const STATUS_WORDS = { pass: "passed", fail: "failed", error: "error", timeout: "timed out" };

/** Render a GradeResult dict into the `.grade-results` container. */
export function renderGradeResult(container, result) {
  container.replaceChildren();
  container.classList.remove("is-pass", "is-fail", "is-error", "is-busy");
  if (!result) return;
  const tests = Array.isArray(result.tests) ? result.tests : [];
  const passed = tests.filter((test) => test.status === "pass").length;
  let summary;
  if (result.status === "pass") summary = `✓ All ${tests.length} tests passed.`;
  else if (result.status === "error" && tests.length === 0) summary = "✗ Your code could not be graded.";
  else summary = `✗ ${passed} of ${tests.length} tests passed.`;
  container.classList.add(`is-${result.status === "pass" ? "pass" : result.status === "error" ? "error" : "fail"}`);
  container.append(el("p", { class: "grade-summary" }, summary));
  // The message repeats the count when there are tests; it matters when the code could not be run at all.
  if (result.message && (result.status === "error" || tests.length === 0)) {
    container.append(el("p", { class: "grade-message" }, result.message));
  }
  if (tests.length) {
    const list = el("ul", { class: "test-results" });
    const hintsShown = new Set();
    for (const test of tests) {
      const ok = test.status === "pass";
      const item = el(
        "li",
        { class: `test-result test-${test.status}` },
        el("span", { class: "test-mark", "aria-hidden": "true" }, ok ? "✓" : "✗"),
        " ",
        el("code", { class: "test-name" }, test.name),
        " ",
        el("span", { class: "test-status" }, STATUS_WORDS[test.status] ?? test.status),
      );
      if (test.message) item.append(el("p", { class: "test-message" }, test.message));
      // One hint often explains several failing tests: show it once, under the first of them.
      if (test.hint && !hintsShown.has(test.hint)) {
        hintsShown.add(test.hint);
        item.append(el("p", { class: "test-hint" }, el("strong", {}, "Hint: "), test.hint));
      }
      list.append(item);
    }
    container.append(list);
  }
  if (result.output) {
    container.append(
      el("details", { class: "grade-output" }, el("summary", {}, "What your code printed"), el("pre", {}, result.output)),
    );
  }
  const meta = [];
  if (typeof result.duration_ms === "number") meta.push(`${result.duration_ms} ms`);
  if (result.sandbox) meta.push(`sandbox: ${result.sandbox}`);
  if (meta.length) container.append(el("p", { class: "grade-meta" }, meta.join(" · ")));
}

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

  const saved = ctx.progress.get().code?.[exerciseId];
  if (saved && typeof saved.source === "string") textarea.value = saved.source;
  if (saved && saved.result) renderGradeResult(results, saved.result);

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
      renderGradeResult(results, reply.result);
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
