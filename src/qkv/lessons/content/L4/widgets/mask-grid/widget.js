// @ts-check
// The mask grid: toggle which keys each query may attend (or pick a preset) and watch the attention
// weights (a heatmap drawn here as SVG) and each query's output follow. Every number comes from the
// server's config, computed by the qkv library for each possible row of the mask; this module only
// looks them up. A query with no allowed key shows the chosen policy: qkv's zero or nan policy, its
// error for "raise", or what filling the scores with -1e9 instead of -inf gives.
import { claim, el, formatNumber, showLive, svg } from "/static/js/widget-kit.js";

const CELL = 56; // SVG units per heatmap cell
const LABEL = 70; // room for the query labels on the left
const TOP = 24; // room for the key labels on top

const PRESETS = [
  ["all", "All allowed"],
  ["causal", "Causal"],
  ["padding", "Padding"],
  ["no-diagonal", "Diagonal excluded (a mistake)"],
  ["none", "Clear all"],
];
const POLICIES = [
  ["zero", "zero weights, zero output (qkv's default, like PyTorch)"],
  ["nan", "NaN, the 0/0 itself"],
  ["raise", "raise an error"],
  ["fill", "−1e9 instead of −∞ (a common shortcut)"],
];
const POLICY_WORDS = {
  zero: "zero weights and output",
  nan: "NaN, since 0/0 has no value",
  raise: "an error",
  fill: "uniform weights, the mean of V",
};
const MOVES = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

function show(value) {
  // null in a dead row under the nan policy is NaN (JSON has no NaN); elsewhere numbers.
  return value === null ? "NaN" : formatNumber(value);
}

/**
 * The grid is one tab stop (a roving tabindex): only the last focused button takes Tab; the arrow keys
 * move between the buttons, staying inside the grid.
 */
function makeCurrent(toggles, button) {
  for (const other of toggles.flat()) other.tabIndex = other === button ? 0 : -1;
}

function moveFocus(toggles, event, i, j) {
  const move = MOVES[event.key];
  if (!move) return;
  const row = Math.min(toggles.length - 1, Math.max(0, i + move[0]));
  const column = Math.min(toggles[0].length - 1, Math.max(0, j + move[1]));
  makeCurrent(toggles, toggles[row][column]);
  toggles[row][column].focus();
  event.preventDefault();
}

/** A table with one toggle button per (query, key); a click calls `onToggle(i, j)`. */
function toggleGrid(uid, nQ, nK, onToggle) {
  const toggles = [];
  const head = el("tr", {}, el("td", {}));
  for (let j = 0; j < nK; j += 1) head.append(el("th", { scope: "col" }, `key ${j}`));
  const body = el("tbody");
  for (let i = 0; i < nQ; i += 1) {
    const tr = el("tr", { "data-query": i }, el("th", { scope: "row" }, `query ${i}`));
    toggles.push([]);
    for (let j = 0; j < nK; j += 1) {
      const button = el("button", { type: "button", class: "mask-toggle", "data-query": i, "data-key": j });
      button.addEventListener("click", () => onToggle(i, j));
      button.addEventListener("keydown", (event) => moveFocus(toggles, event, i, j));
      button.addEventListener("focus", () => makeCurrent(toggles, button));
      button.tabIndex = i === 0 && j === 0 ? 0 : -1;
      toggles[i].push(button);
      tr.append(el("td", {}, button));
    }
    body.append(tr);
  }
  const table = el("table", { class: "mask-grid-table", "aria-describedby": `${uid}-grid-note` }, el("thead", {}, head), body);
  return { table, toggles };
}

/** A button per preset mask; a click calls `onPreset(name)`. */
function presetButtons(config, onPreset) {
  const row = el("div", { class: "button-row mask-presets", role: "group", "aria-label": "Mask presets" });
  for (const [name, text] of PRESETS) {
    const label = name === "padding" ? `Padding (length ${config.padding_length})` : text;
    const button = el("button", { type: "button", class: "secondary", "data-preset": name }, label);
    button.addEventListener("click", () => onPreset(name));
    row.append(button);
  }
  return row;
}

/** A radio button per policy for a query with no allowed key; choosing one calls `onPolicy(name)`. */
function policyChoice(uid, initial, onPolicy) {
  const box = el("fieldset", { class: "mask-policy" }, el("legend", {}, "A query with no allowed key gets"));
  for (const [name, text] of POLICIES) {
    const input = el("input", { type: "radio", name: `${uid}-policy`, id: `${uid}-policy-${name}`, value: name });
    input.checked = name === initial;
    input.addEventListener("change", () => onPolicy(name));
    box.append(el("div", { class: "check-row" }, input, el("label", { for: `${uid}-policy-${name}` }, text)));
  }
  return box;
}

/** Query i's weights and output for the current mask, and whether the row is fully masked. */
function rowResult(config, state, i) {
  const bits = state.mask[i].reduce((found, allowed, j) => (allowed ? found | (1 << j) : found), 0);
  if (bits !== 0) return { dead: false, ...config.rows[i][bits] };
  if (state.policy === "raise") return { dead: true, weights: null, output: null };
  return { dead: true, ...config.dead[state.policy][i] };
}

/** The results of every query, and qkv's error sentence when the raise policy meets a dead row. */
function currentResults(config, state) {
  const results = state.mask.map((_, i) => rowResult(config, state, i));
  const deadRows = results.flatMap((result, i) => (result.dead ? [i] : []));
  const raised = state.policy === "raise" && deadRows.length > 0;
  const error = raised ? config.errors[String(deadRows.reduce((bits, i) => bits | (1 << i), 0))] : null;
  return { results, deadRows, raised, error };
}

function drawToggles(grid, state, deadRows) {
  grid.toggles.forEach((row, i) =>
    row.forEach((button, j) => {
      const allowed = state.mask[i][j];
      const shown = allowed ? "0" : "−∞";
      button.textContent = shown;
      button.setAttribute("aria-pressed", String(allowed));
      // The name starts with what the cell shows, so that speech input ("click minus infinity") and the
      // screen reader agree with the screen; then whose pair it is and what it means.
      button.setAttribute("aria-label", `${shown}: query ${i}, key ${j}, ${allowed ? "may attend" : "masked"}`);
      button.classList.toggle("is-masked", !allowed);
    }),
  );
  grid.table.querySelectorAll("tbody tr").forEach((tr, i) => tr.classList.toggle("is-dead", deadRows.includes(i)));
}

/** One heatmap cell: its shaded square (with a tooltip) and the weight written on it. */
function heatCell(i, j, weight, allowed, raised) {
  const x = LABEL + j * CELL;
  const y = TOP + i * CELL;
  const cell = svg("rect", {
    x: x + 1,
    y: y + 1,
    width: CELL - 2,
    height: CELL - 2,
    rx: 4,
    // A masked key is grey, unless it still got weight (a fully-masked row filled with -1e9).
    class: `heat-cell${!allowed && !(weight > 0) ? " is-masked" : ""}`,
    "fill-opacity": Number.isFinite(weight) ? (0.08 + 0.85 * weight).toFixed(3) : 0.08,
    "data-query": i,
    "data-key": j,
    "data-weight": weight === null ? (raised ? "error" : "NaN") : String(weight),
  });
  cell.append(svg("title", {}, `query ${i}, key ${j}: weight ${raised ? "none (error)" : show(weight)}`));
  const strong = Number.isFinite(weight) && weight > 0.55;
  const text = raised ? "—" : weight === null ? "NaN" : weight.toFixed(3);
  const label = svg(
    "text",
    { x: x + CELL / 2, y: y + CELL / 2 + 5, class: `heat-value${strong ? " is-strong" : ""}`, "text-anchor": "middle", "aria-hidden": "true" },
    text,
  );
  return [cell, label];
}

function drawHeatmap(heatmap, state, { results, raised }) {
  const nK = state.mask[0].length;
  heatmap.replaceChildren();
  for (let j = 0; j < nK; j += 1) {
    heatmap.append(svg("text", { x: LABEL + j * CELL + CELL / 2, y: TOP - 8, class: "heat-label", "text-anchor": "middle" }, `key ${j}`));
  }
  results.forEach((result, i) => {
    const y = TOP + i * CELL;
    heatmap.append(svg("text", { x: LABEL - 8, y: y + CELL / 2 + 5, class: "heat-label", "text-anchor": "end" }, `query ${i}`));
    for (let j = 0; j < nK; j += 1) {
      const weight = raised || result.weights === null ? null : result.weights[j];
      heatmap.append(...heatCell(i, j, weight, state.mask[i][j], raised));
    }
    if (result.dead) {
      const outline = { x: LABEL - 2, y, width: nK * CELL + 2, height: CELL, rx: 6, class: "dead-outline", "data-dead-row": i };
      heatmap.append(svg("rect", outline));
    }
  });
}

function drawOutputs(outputs, state, { results, raised }) {
  outputs.replaceChildren(
    ...results.map((result, i) => {
      const text = raised ? "none: the call raised" : `[${result.output.map((v) => show(v)).join(", ")}]`;
      const note = result.dead ? el("span", { class: "dead-note" }, ` (no key left: ${POLICY_WORDS[state.policy]})`) : null;
      return el(
        "tr",
        { class: result.dead ? "is-dead" : "", "data-query": i },
        el("th", { scope: "row" }, `query ${i}`),
        el("td", {}, el("span", { "data-output": i }, text), note),
      );
    }),
  );
}

/** The error line under the heatmap, and the sentence screen readers hear after each change. */
function drawMessages(parts, { results, raised, error }) {
  parts.problem.hidden = !raised;
  parts.problem.textContent = raised ? `ValueError: ${error}` : "";
  parts.status.textContent = raised
    ? `Error: ${error}`
    : `Weights ${results.map((r) => `[${r.weights.map((v) => show(v)).join(", ")}]`).join(", ")}.`;
}

/** The heatmap, the outputs table, the error line and the status sentence, empty until drawn. */
function resultParts(uid, nQ, nK) {
  const outputs = el("tbody");
  const head = el("tr", {}, el("th", { scope: "col" }, "query"), el("th", { scope: "col" }, "output = weights · V"));
  return {
    heatmap: svg("svg", { class: "mask-heatmap", viewBox: `0 0 ${LABEL + nK * CELL} ${TOP + nQ * CELL}`, role: "img", "aria-labelledby": `${uid}-heat-title` }),
    outputs,
    outputTable: el("table", { class: "mask-outputs" }, el("thead", {}, head), outputs),
    problem: el("p", { class: "mask-error", role: "status", hidden: true }),
    status: el("p", { class: "widget-status visually-hidden", "aria-live": "polite" }),
  };
}

const GRID_NOTE =
  "Each button is one (query, key) pair: 0 lets the query attend the key, −∞ masks it. Click a cell or press " +
  "Enter or Space on it; the arrow keys move between cells.";

/** Turn one `[data-widget="mask-grid"]` into a live grid. */
export function mount(element) {
  const claimed = claim(element, (c) => Array.isArray(c.rows) && Boolean(c.presets) && Boolean(c.dead));
  if (!claimed) return;
  const { config, uid } = claimed;
  const state = { mask: config.presets[config.initial ?? "causal"].map((row) => row.slice()), policy: "zero" };
  const parts = resultParts(uid, config.rows.length, config.K.length);
  const draw = () => {
    const now = currentResults(config, state);
    drawToggles(grid, state, now.deadRows);
    drawHeatmap(parts.heatmap, state, now);
    drawOutputs(parts.outputs, state, now);
    drawMessages(parts, now);
  };
  const grid = toggleGrid(uid, config.rows.length, config.K.length, (i, j) => {
    state.mask[i][j] = !state.mask[i][j];
    draw();
  });
  const presets = presetButtons(config, (name) => {
    state.mask = config.presets[name].map((row) => row.slice());
    draw();
  });
  const policies = policyChoice(uid, state.policy, (name) => {
    state.policy = name;
    draw();
  });
  showLive(
    element,
    el(
      "div",
      { class: "widget-live mask-grid" },
      el("h3", {}, "Mask grid"),
      el("p", { class: "widget-intro", id: `${uid}-grid-note` }, GRID_NOTE),
      presets,
      el("div", { class: "table-scroll" }, grid.table),
      policies,
      el("h4", { id: `${uid}-heat-title` }, "Attention weights (the deeper the shade, the larger the weight)"),
      parts.heatmap,
      parts.problem,
      el("h4", {}, "Outputs"),
      el("div", { class: "table-scroll" }, parts.outputTable),
      parts.status,
    ),
  );
  draw();
}
