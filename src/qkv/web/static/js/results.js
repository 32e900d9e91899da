// The grader's verdict on a code submission, drawn for a learner. A first run of the starter code fails
// some twenty tests, so they are grouped by the function they test: each group opens with its first
// failure in full and folds the other failures and all passes away behind a <details>.
import { el } from "./format.js";
import { helpfulBox } from "./helpful.js";

const STATUS_WORDS = { pass: "passed", fail: "failed", error: "error", timeout: "timed out", not_run: "not run" };
const MARKS = { pass: "✓", not_run: "–" };

/** Tests that an earlier test stopped before they could start: neither passes nor failures. */
const isNotRun = (test) => test.status === "not_run";
const isFailure = (test) => test.status !== "pass" && !isNotRun(test);

/** The function a test calls: the results document says so (version 2); older saved results only name it. */
function functionOf(test, functions) {
  if (typeof test.function === "string" && functions.includes(test.function)) return test.function;
  const name = String(test.name ?? "");
  return functions.find((fn) => name === fn || name.startsWith(`${fn} `)) ?? null;
}

/** The tests grouped by the function they call, in the order `functions` lists them. */
export function groupTests(tests, functions = []) {
  const groups = new Map(functions.map((name) => [name, []]));
  const other = [];
  for (const test of tests) {
    const owner = functionOf(test, functions);
    (owner ? groups.get(owner) : other).push(test);
  }
  const result = [...groups].filter(([, members]) => members.length).map(([name, members]) => ({ name, tests: members }));
  if (other.length) result.push({ name: null, tests: other });
  return result;
}

/** A test's name without the function its group is already titled with ("area of a square" → "of a square"). */
function shortName(test, fn) {
  const name = String(test.name ?? "");
  return fn && name.startsWith(`${fn} `) ? name.slice(fn.length + 1) : name;
}

/**
 * Call, expected and got in one monospace block, lined up, so that a learner can repeat the call in their
 * own Python and compare. Older saved results (version 2) have no expected/got: the call alone is shown.
 */
function reproBlock(test) {
  const rows = [
    ["Call", test.call],
    ["Expected", test.expected],
    ["Got", test.got],
  ].filter(([, value]) => typeof value === "string" && value !== "");
  if (!rows.length) return null;
  const list = el("dl", { class: "test-repro" });
  for (const [name, value] of rows) {
    list.append(el("dt", {}, `${name}:`), el("dd", {}, el("code", {}, value)));
  }
  return list;
}

function testItem(test, hintsShown, fn) {
  const ok = test.status === "pass";
  const item = el(
    "li",
    { class: `test-result test-${test.status}` },
    el("span", { class: "test-mark", "aria-hidden": "true" }, MARKS[test.status] ?? "✗"),
    " ",
    el("span", { class: "test-name", title: test.name }, shortName(test, fn)),
    " ",
    el("span", { class: "test-status" }, STATUS_WORDS[test.status] ?? test.status),
  );
  // An instructor's note on this behaviour comes first, marked as theirs.
  if (test.note && !hintsShown.has(`note:${test.note}`)) {
    hintsShown.add(`note:${test.note}`);
    item.append(el("p", { class: "test-note" }, el("strong", {}, "Instructor's note: "), test.note));
  }
  if (test.message) item.append(el("p", { class: "test-message" }, test.message));
  // The call itself, so that a learner can run it in their own Python and see the same result.
  const repro = ok ? null : reproBlock(test);
  if (repro) item.append(repro);
  // One hint often explains several failing tests: show it once, under the first of them.
  if (test.hint && !hintsShown.has(test.hint)) {
    hintsShown.add(test.hint);
    item.append(el("p", { class: "test-hint" }, el("strong", {}, "Hint: "), test.hint));
  }
  if (!ok && !isNotRun(test)) {
    const box = askHelpful(test);
    if (box) item.append(box);
  }
  return item;
}

/** The result being drawn: its exercise and signatures, for "Did this help?". */
let drawing = { exerciseId: null, signatures: {} };

/**
 * The kind of message a hint is, by where it came from (the results document's hint_from): a mutant's numbers
 * said without the code showing its change ("seen") are a mutant's; a hint of an older result says nothing.
 */
const HINT_KINDS = { lesson: "lesson", relation: "relation", mutant: "mutant", seen: "mutant", crash: "crash" };

/** "Did this help?" for a failed test's message: the note if it has one, else its hint, else its message. */
function askHelpful(test) {
  if (!drawing.exerciseId) return null;
  const message = test.note || test.hint || test.message;
  const kind = test.note ? "note" : test.hint ? HINT_KINDS[test.hint_from] ?? "lesson" : "plain";
  const signature = drawing.signatures[test.function] ?? null;
  return helpfulBox({ exercise_id: drawing.exerciseId, function: test.function ?? "", signature, message, kind });
}

function folded(summary, className, tests, hintsShown, fn) {
  const list = el("ul", { class: "test-results" }, ...tests.map((test) => testItem(test, hintsShown, fn)));
  return el("details", { class: className }, el("summary", {}, summary), list);
}

function groupTitle(group, passes, notRun) {
  const ran = group.tests.length - notRun.length;
  const ok = passes.length === group.tests.length;
  // A group whose tests never started says only that ("7 not run"), not "0 of 0 passed".
  const count = !notRun.length
    ? `${passes.length} of ${group.tests.length} passed`
    : ran
      ? `${passes.length} of ${ran} passed, ${notRun.length} not run`
      : `${notRun.length} not run`;
  return [
    el("span", { class: "test-mark", "aria-hidden": "true" }, ok ? "✓" : ran === passes.length ? "–" : "✗"),
    " ",
    group.name ? el("code", {}, group.name) : "Other tests",
    " ",
    el("span", { class: "test-group-count" }, count),
  ];
}

function groupBox(group) {
  const failures = group.tests.filter(isFailure);
  const passes = group.tests.filter((test) => test.status === "pass");
  const notRun = group.tests.filter(isNotRun);
  const box = el("div", { class: `test-group ${failures.length ? "has-failures" : notRun.length ? "has-not-run" : "all-pass"}` });
  if (group.name) box.dataset.function = group.name;
  // A group without failures is one folded line; a group with failures is open at its first failure.
  if (!failures.length) box.append(el("details", { class: "passing-tests" }, el("summary", {}, ...groupTitle(group, passes, notRun))));
  else box.append(el("p", { class: "test-group-title" }, ...groupTitle(group, passes, notRun)));
  return { name: group.name, box, failures, passes, notRun };
}

/**
 * Render a GradeResult dict into the `.grade-results` container.
 *
 * @param {HTMLElement} container
 * @param {object|null} result  the results document: status, message, line, tests [{name, status, message, hint,
 *   function, call, expected, got}], …
 * @param {string[]} [functions]  the exercise's functions, to group the tests by
 * @param {string|null} [exerciseId]  the exercise, for "Did this help?" under each failed test (none without)
 */
export function renderGradeResult(container, result, functions = [], exerciseId = null) {
  container.replaceChildren();
  drawing = { exerciseId, signatures: (result && typeof result.signatures === "object" && result.signatures) || {} };
  container.classList.remove("is-pass", "is-fail", "is-error", "is-busy");
  if (!result) return;
  const tests = Array.isArray(result.tests) ? result.tests : [];
  const passed = tests.filter((test) => test.status === "pass").length;
  const notRun = tests.filter(isNotRun).length;
  let summary;
  if (result.status === "pass") summary = `✓ All ${tests.length} tests passed.`;
  else if (result.status === "error" && tests.length === 0) summary = "✗ Your code could not be graded.";
  else if (notRun) summary = `✗ ${passed} of ${tests.length - notRun} tests that ran passed; ${notRun} not run.`;
  else summary = `✗ ${passed} of ${tests.length} tests passed.`;
  container.classList.add(`is-${result.status === "pass" ? "pass" : result.status === "error" ? "error" : "fail"}`);
  container.append(el("p", { class: "grade-summary" }, summary));
  // The message repeats the count when there are tests; it matters when the code could not be run at all,
  // and it says why tests did not run.
  if (result.message && (result.status === "error" || tests.length === 0 || notRun)) {
    container.append(el("p", { class: "grade-message" }, result.message));
  }
  if (tests.length) {
    const boxes = groupTests(tests, functions).map(groupBox);
    const hintsShown = new Set();
    // The first failure of every group is drawn first, so that its hint is the one shown in full.
    const firsts = boxes.map(({ name, failures }) => (failures.length ? testItem(failures[0], hintsShown, name) : null));
    boxes.forEach(({ name, box, failures, passes, notRun: skipped }, i) => {
      if (firsts[i]) box.append(el("ul", { class: "test-results" }, firsts[i]));
      const rest = failures.slice(1);
      if (rest.length) {
        const words = rest.length === 1 ? "1 more failing test" : `${rest.length} more failing tests`;
        box.append(folded(words, "more-failures", rest, hintsShown, name));
      }
      if (!failures.length) {
        const items = [...passes, ...skipped].map((t) => testItem(t, hintsShown, name));
        box.querySelector("details").append(el("ul", { class: "test-results" }, ...items));
        return;
      }
      if (skipped.length) {
        const words = skipped.length === 1 ? "1 test not run" : `${skipped.length} tests not run`;
        box.append(folded(words, "not-run-tests", skipped, hintsShown, name));
      }
      if (passes.length) {
        const words = passes.length === 1 ? "1 passing test" : `${passes.length} passing tests`;
        box.append(folded(words, "passing-tests", passes, hintsShown, name));
      }
    });
    container.append(el("div", { class: "test-groups" }, ...boxes.map(({ box }) => box)));
  }
  if (result.output) {
    container.append(
      el("details", { class: "grade-output" }, el("summary", {}, "What your code printed"), el("pre", {}, result.output)),
    );
  }
  const meta = [];
  if (typeof result.duration_ms === "number") meta.push(`${result.duration_ms} ms`);
  if (meta.length) container.append(el("p", { class: "grade-meta" }, meta.join(" · ")));
}
