// The projection widget: two sliders for the hidden vector x; every move asks the server (POST /api/project,
// which uses qkv.project_qkv) for q, k and v, and updates the table in place.
// A result that an exercise of the page asks for (config.solved_by: {q: "q", ...}) shows "?" until the
// learner's PROGRESS document says that exercise was answered correctly for the current variant; the server
// leaves such results out of the config, so nothing on the page gives them away before.
import { ApiError, postJson } from "../api.js";
import { debounce, el, formatCompact } from "../format.js";
import { readEmbeddedProgress } from "../progress.js";

const ROWS = [
  { name: "q", label: "query q = x·Wq", matrix: "Wq" },
  { name: "k", label: "key k = x·Wk", matrix: "Wk" },
  { name: "v", label: "value v = x·Wv", matrix: "Wv" },
];

let widgetCount = 0;

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
  min = Math.min(min, ...x);
  max = Math.max(max, ...x);
  return { min, max, step };
}

/** Whether the exercise `exerciseId` is answered correctly for the variant on the page. */
export function isSolved(progress, exerciseId) {
  return progress?.exercises?.[exerciseId]?.feedback?.correct === true;
}

function hiddenResult(letter) {
  return [
    el(
      "span",
      { class: "hidden-result" },
      "?",
      el("span", { class: "visually-hidden" }, ` (${letter} not shown until you type it correctly below)`),
    ),
  ];
}

/**
 * Turn one `[data-widget="projection-sliders"]` into a live widget.
 *
 * @param {HTMLElement} widget
 * @param {{progress?: {get(): object, onChange(listener: (progress: object) => void): void}}} [ctx]
 *   the page's progress store, so that a result appears as soon as its exercise is solved
 */
export function mount(widget, ctx = {}) {
  if (widget.dataset.mounted) return;
  let config;
  try {
    config = JSON.parse(widget.dataset.config ?? "{}");
  } catch {
    return; // keep the server-rendered table
  }
  if (!Array.isArray(config.x) || !config.Wq || !config.Wk || !config.Wv) return;
  widget.dataset.mounted = "yes";
  widgetCount += 1;
  const uid = `proj${widgetCount}`;
  const x = config.x.slice(0, 2).map(Number);
  const { min, max, step } = sliderRange(config, x);

  const sliders = x.map((value, i) => {
    const input = el("input", {
      type: "range",
      id: `${uid}-x${i}`,
      min,
      max,
      step,
      value,
      class: "x-slider",
      "data-index": i,
    });
    const output = el("output", { for: `${uid}-x${i}`, class: "slider-value" }, formatCompact(value));
    const row = el("div", { class: "slider-row" }, el("label", { for: `${uid}-x${i}` }, `hidden x[${i}]`), input, output);
    return { input, output, row };
  });

  const solvedBy = config.solved_by && typeof config.solved_by === "object" ? config.solved_by : {};
  let progress = ctx.progress ? ctx.progress.get() : readEmbeddedProgress();
  const shown = (name) => !(name in solvedBy) || isSolved(progress, solvedBy[name]);
  const latestValues = {};
  for (const row of ROWS) if (Array.isArray(config[row.name])) latestValues[row.name] = config[row.name];

  const heading = el("th", { scope: "col", class: "result-heading" }, `result for x = ${vectorText(x)}`);
  const resultCells = {};
  const body = el("tbody");
  function drawResult(name) {
    const cell = resultCells[name];
    const hidden = !shown(name);
    cell.classList.toggle("is-hidden", hidden);
    if (hidden) cell.replaceChildren(...hiddenResult(name));
    else cell.textContent = Array.isArray(latestValues[name]) ? vectorText(latestValues[name]) : "…";
  }
  for (const row of ROWS) {
    const cell = el("td", { class: "result", "data-result": row.name });
    resultCells[row.name] = cell;
    body.append(
      el(
        "tr",
        { "data-row": row.name },
        el("th", { scope: "row" }, row.label),
        el("td", { class: "matrix", "data-matrix": row.matrix }, matrixText(config[row.matrix])),
        cell,
        el("td", { class: "role" }, config.roles?.[row.name] ? `“${config.roles[row.name]}”` : ""),
      ),
    );
  }
  const table = el(
    "table",
    { class: "projection-table" },
    el("caption", { class: "visually-hidden" }, "The three projections of the hidden vector x"),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col" }, "projection"),
        el("th", { scope: "col" }, "matrix (rows)"),
        heading,
        el("th", { scope: "col" }, "role"),
      ),
    ),
    body,
  );
  for (const row of ROWS) drawResult(row.name);
  const status = el("p", { class: "widget-status", "aria-live": "polite" });
  // The line under the table says the same as the table, so it follows the same "?" rule.
  function drawStatus() {
    if (!ROWS.every((row) => Array.isArray(latestValues[row.name]) || !shown(row.name))) return;
    status.textContent = ROWS.map((row) => `${row.name} = ${shown(row.name) ? vectorText(latestValues[row.name]) : "?"}`).join(", ");
  }
  const live = el(
    "div",
    { class: "widget-live" },
    el("div", { class: "sliders" }, ...sliders.map((s) => s.row)),
    el("div", { class: "table-scroll" }, table),
    status,
  );

  // Keep the no-JavaScript content for reference but out of sight; the live widget replaces it.
  for (const child of Array.from(widget.children)) child.hidden = true;
  widget.append(live);

  let latest = 0;
  const update = debounce(async () => {
    const current = sliders.map((s) => Number(s.input.value));
    const request = ++latest;
    try {
      const reply = await postJson("/api/project", { x: current, Wq: config.Wq, Wk: config.Wk, Wv: config.Wv });
      if (request !== latest) return; // a newer slider position is on its way
      for (const row of ROWS) {
        latestValues[row.name] = reply[row.name];
        drawResult(row.name);
      }
      heading.textContent = `result for x = ${vectorText(current)}`;
      status.classList.remove("is-error");
      drawStatus();
    } catch (error) {
      if (request !== latest) return;
      status.textContent = error instanceof ApiError ? error.message : "The projection could not be computed.";
      status.classList.add("is-error");
    }
  }, 60);

  for (const slider of sliders) {
    slider.input.addEventListener("input", () => {
      slider.output.textContent = formatCompact(Number(slider.input.value));
      update();
    });
  }
  if (ctx.progress && Object.keys(solvedBy).length) {
    ctx.progress.onChange((next) => {
      if (!widget.isConnected) return; // replaced by another variant's widget
      progress = next;
      for (const row of ROWS) drawResult(row.name);
      if (!status.classList.contains("is-error")) drawStatus();
    });
  }
  // The configuration may carry only x and the matrices: ask for q, k and v once right away.
  if (!ROWS.every((row) => Array.isArray(config[row.name]))) update();
}
