// @ts-check
// The projection widget: two sliders for the hidden vector x; every move asks the server (on a lesson page
// POST /api/lessons/{id}/project, elsewhere POST /api/project; both use qkv.project_qkv) for q, k and v,
// and updates the table in place.
// A result that an exercise of the page asks for (config.solved_by: {q: "q", ...}) shows "?" until the
// learner's PROGRESS document says that exercise was answered correctly for the current variant; the server
// leaves such results out of the config, so nothing on the page gives them away before.
import { ApiError, postJson } from "/static/js/api.js";
import { readEmbeddedProgress } from "/static/js/progress.js";
import { claim, debounce, el, formatCompact, showLive } from "/static/js/widget-kit.js";

const ROWS = [
  { name: "q", label: "query q = x·Wq", matrix: "Wq" },
  { name: "k", label: "key k = x·Wk", matrix: "Wk" },
  { name: "v", label: "value v = x·Wv", matrix: "Wv" },
];

function matrixText(matrix) {
  return `[${matrix.map((row) => `[${row.map((v) => formatCompact(v)).join(", ")}]`).join(", ")}]`;
}

function vectorText(values) {
  return `[${values.map((v) => formatCompact(v)).join(", ")}]`;
}

/** Slider bounds from the widget config; accepts {min,max,step}, {range: [lo, hi]} or {slider: {...}}. */
function sliderRange(config, x) {
  const source = config.slider ?? config.range ?? config;
  let min = -4;
  let max = 4;
  let step = 0.5;
  if (Array.isArray(source)) {
    [min, max] = source;
    if (source.length > 2) step = source[2];
  } else if (source && typeof source === "object") {
    if (typeof source.min === "number") min = source.min;
    if (typeof source.max === "number") max = source.max;
    if (typeof source.step === "number") step = source.step;
  }
  return { min: Math.min(min, ...x), max: Math.max(max, ...x), step };
}

/** Whether the exercise `exerciseId` is answered correctly for the variant on the page. */
export function isSolved(progress, exerciseId) {
  return progress?.exercises?.[exerciseId]?.feedback?.correct === true;
}

function hiddenResult(letter) {
  const note = el("span", { class: "visually-hidden" }, ` (${letter} not shown until you type it correctly below)`);
  return el("span", { class: "hidden-result" }, "?", note);
}

/** A slider (with its label and shown value) per component of x. */
function xSliders(uid, x, config) {
  const { min, max, step } = sliderRange(config, x);
  return x.map((value, i) => {
    const id = `${uid}-x${i}`;
    const input = el("input", { type: "range", id, min, max, step, value, class: "x-slider", "data-index": i });
    const output = el("output", { for: id, class: "slider-value" }, formatCompact(value));
    return { input, output, row: el("div", { class: "slider-row" }, el("label", { for: id }, `hidden x[${i}]`), input, output) };
  });
}

/**
 * What the table shows and when: the latest q, k and v, and whether each may be shown yet.
 * `shown(name)` is false while the exercise in `solved_by` that asks for it is unsolved.
 */
function resultsModel(config, ctx) {
  const solvedBy = config.solved_by && typeof config.solved_by === "object" ? config.solved_by : {};
  const model = {
    solvedBy,
    progress: ctx.progress ? ctx.progress.get() : readEmbeddedProgress(),
    values: {},
    shown: (name) => !(name in solvedBy) || isSolved(model.progress, solvedBy[name]),
  };
  for (const row of ROWS) if (Array.isArray(config[row.name])) model.values[row.name] = config[row.name];
  return model;
}

/** The table of the three projections; its result cells are filled by `drawResult`. */
function projectionTable(config, x) {
  const cells = {};
  const heading = el("th", { scope: "col", class: "result-heading" }, `result for x = ${vectorText(x)}`);
  const rows = ROWS.map((row) => {
    cells[row.name] = el("td", { class: "result", "data-result": row.name });
    return el(
      "tr",
      { "data-row": row.name },
      el("th", { scope: "row" }, row.label),
      el("td", { class: "matrix", "data-matrix": row.matrix }, matrixText(config[row.matrix])),
      cells[row.name],
      el("td", { class: "role" }, config.roles?.[row.name] ? `“${config.roles[row.name]}”` : ""),
    );
  });
  const columns = el("tr", {}, el("th", { scope: "col" }, "projection"), el("th", { scope: "col" }, "matrix (rows)"), heading, el("th", { scope: "col" }, "role"));
  const table = el(
    "table",
    { class: "projection-table" },
    el("caption", { class: "visually-hidden" }, "The three projections of the hidden vector x"),
    el("thead", {}, columns),
    el("tbody", {}, ...rows),
  );
  return { table, heading, cells };
}

// A result stays "?" while its exercise is unsolved, and when the server withheld it (null: the lesson's
// route sends no number that would give away an answer the learner has not typed for their numbers).
function visible(model, name) {
  return model.shown(name) && model.values[name] !== null;
}

function drawResult(cells, model, name) {
  const hidden = !visible(model, name);
  cells[name].classList.toggle("is-hidden", hidden);
  if (hidden) cells[name].replaceChildren(hiddenResult(name));
  else cells[name].textContent = Array.isArray(model.values[name]) ? vectorText(model.values[name]) : "…";
}

// The line under the table says the same as the table, so it follows the same "?" rule.
function drawStatus(status, model) {
  if (!ROWS.every((row) => Array.isArray(model.values[row.name]) || !visible(model, row.name))) return;
  status.textContent = ROWS.map((row) => `${row.name} = ${visible(model, row.name) ? vectorText(model.values[row.name]) : "?"}`).join(", ");
}

/** Ask the server (`url`) for q, k and v at the sliders' x (the latest request wins) and draw them. */
function updater(config, sliders, view, model, url) {
  let latest = 0;
  const update = debounce(async () => {
    const current = sliders.map((s) => Number(s.input.value));
    const request = ++latest;
    const progressSent = model.progress;
    try {
      const reply = await postJson(url, { x: current, Wq: config.Wq, Wk: config.Wk, Wv: config.Wv });
      if (request !== latest) return; // a newer slider position is on its way
      for (const row of ROWS) model.values[row.name] = reply[row.name];
      for (const row of ROWS) drawResult(view.cells, model, row.name);
      view.heading.textContent = `result for x = ${vectorText(current)}`;
      view.status.classList.remove("is-error");
      drawStatus(view.status, model);
      // Solved while this request was on its way: the server withheld what it may now send; ask once more.
      if (model.progress !== progressSent && ROWS.some((row) => reply[row.name] === null && model.shown(row.name))) update();
    } catch (error) {
      if (request !== latest) return;
      view.status.textContent = error instanceof ApiError ? error.message : "The projection could not be computed.";
      view.status.classList.add("is-error");
    }
  }, 60);
  return update;
}

/**
 * Turn one `[data-widget="projection-sliders"]` into a live widget.
 *
 * @param {HTMLElement} element
 * @param {{api?: string, progress?: {get(): object, onChange(listener: (progress: object) => void): void}}} [ctx]
 *   the page's progress store, so that a result appears as soon as its exercise is solved
 */
export function mount(element, ctx = {}) {
  const claimed = claim(element, (c) => Array.isArray(c.x) && Boolean(c.Wq && c.Wk && c.Wv));
  if (!claimed) return;
  const { config, uid } = claimed;
  const x = config.x.slice(0, 2).map(Number);
  const sliders = xSliders(uid, x, config);
  const model = resultsModel(config, ctx);
  const view = { ...projectionTable(config, x), status: el("p", { class: "widget-status", "aria-live": "polite" }) };
  for (const row of ROWS) drawResult(view.cells, model, row.name);
  // Keep the no-JavaScript content for reference but out of sight; the live widget replaces it.
  showLive(
    element,
    el("div", { class: "widget-live" }, el("div", { class: "sliders" }, ...sliders.map((s) => s.row)), el("div", { class: "table-scroll" }, view.table), view.status),
  );
  // On a lesson page the lesson's guarded route; elsewhere the plain library route.
  const update = updater(config, sliders, view, model, ctx.api ? `${ctx.api}/project` : "/api/project");
  for (const slider of sliders) {
    slider.input.addEventListener("input", () => {
      slider.output.textContent = formatCompact(Number(slider.input.value));
      update();
    });
  }
  if (ctx.progress && Object.keys(model.solvedBy).length) {
    ctx.progress.onChange((next) => {
      if (!element.isConnected) return; // replaced by another variant's widget
      model.progress = next;
      // A result the server withheld (null) is asked for again once its exercise is solved.
      if (ROWS.some((row) => model.values[row.name] === null && model.shown(row.name))) update();
      for (const row of ROWS) drawResult(view.cells, model, row.name);
      if (!view.status.classList.contains("is-error")) drawStatus(view.status, model);
    });
  }
  // The configuration may carry only x and the matrices: ask for q, k and v once right away.
  if (!ROWS.every((row) => Array.isArray(config[row.name]))) update();
}
