// The mask grid: toggle which keys each query may attend (or pick a preset) and watch the attention
// weights (a heatmap drawn here as SVG) and each query's output follow. Every number comes from the
// server's config, computed by the qkv library for each possible row of the mask; this module only
// looks them up. A query with no allowed key shows the chosen policy: qkv's zero or nan policy, its
// error for "raise", or what filling the scores with -1e9 instead of -inf gives.
import { el, formatNumber } from "../format.js";

const SVG = "http://www.w3.org/2000/svg";
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
let gridCount = 0;

function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function show(value) {
  // null in a dead row under the nan policy is NaN (JSON has no NaN); elsewhere numbers.
  return value === null ? "NaN" : formatNumber(value);
}

/** Turn one `[data-widget="mask-grid"]` into a live grid. */
export function mount(widget) {
  if (widget.dataset.mounted) return;
  let config;
  try {
    config = JSON.parse(widget.dataset.config ?? "{}");
  } catch {
    return;
  }
  if (!Array.isArray(config.rows) || !config.presets || !config.dead) return;
  widget.dataset.mounted = "yes";
  gridCount += 1;
  const uid = `mask${gridCount}`;
  const nQ = config.rows.length;
  const nK = config.K.length;
  const state = {
    mask: config.presets[config.initial ?? "causal"].map((row) => row.slice()),
    policy: "zero",
  };

  // -- the toggle grid ---------------------------------------------------------------------------
  const toggles = [];
  const head = el("tr", {}, el("td", {}));
  for (let j = 0; j < nK; j += 1) head.append(el("th", { scope: "col" }, `key ${j}`));
  const body = el("tbody");
  for (let i = 0; i < nQ; i += 1) {
    const tr = el("tr", { "data-query": i }, el("th", { scope: "row" }, `query ${i}`));
    toggles.push([]);
    for (let j = 0; j < nK; j += 1) {
      const button = el("button", {
        type: "button",
        class: "mask-toggle",
        "data-query": i,
        "data-key": j,
      });
      button.addEventListener("click", () => {
        state.mask[i][j] = !state.mask[i][j];
        draw();
      });
      button.addEventListener("keydown", (event) => moveFocus(event, i, j));
      toggles[i].push(button);
      tr.append(el("td", {}, button));
    }
    body.append(tr);
  }
  const grid = el(
    "table",
    { class: "mask-grid-table", "aria-describedby": `${uid}-grid-note` },
    el("thead", {}, head),
    body,
  );

  function moveFocus(event, i, j) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    const move = moves[event.key];
    if (!move) return;
    const row = Math.min(nQ - 1, Math.max(0, i + move[0]));
    const column = Math.min(nK - 1, Math.max(0, j + move[1]));
    toggles[row][column].focus();
    event.preventDefault();
  }

  // -- presets and policies ----------------------------------------------------------------------
  const presetRow = el("div", { class: "button-row mask-presets", role: "group", "aria-label": "Mask presets" });
  for (const [name, text] of PRESETS) {
    const label = name === "padding" ? `Padding (length ${config.padding_length})` : text;
    const button = el("button", { type: "button", class: "secondary", "data-preset": name }, label);
    button.addEventListener("click", () => {
      state.mask = config.presets[name].map((row) => row.slice());
      draw();
    });
    presetRow.append(button);
  }
  const policyBox = el("fieldset", { class: "mask-policy" }, el("legend", {}, "A query with no allowed key gets"));
  for (const [name, text] of POLICIES) {
    const input = el("input", { type: "radio", name: `${uid}-policy`, id: `${uid}-policy-${name}`, value: name });
    input.checked = name === state.policy;
    input.addEventListener("change", () => {
      state.policy = name;
      draw();
    });
    policyBox.append(el("div", { class: "check-row" }, input, el("label", { for: `${uid}-policy-${name}` }, text)));
  }

  // -- results -------------------------------------------------------------------------------------
  const heatmap = svg("svg", {
    class: "mask-heatmap",
    viewBox: `0 0 ${LABEL + nK * CELL} ${TOP + nQ * CELL}`,
    role: "img",
    "aria-labelledby": `${uid}-heat-title`,
  });
  const outputs = el("tbody");
  const outputTable = el(
    "table",
    { class: "mask-outputs" },
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "query"), el("th", { scope: "col" }, "output = weights · V"))),
    outputs,
  );
  const problem = el("p", { class: "mask-error", role: "status", hidden: true });
  const status = el("p", { class: "widget-status visually-hidden", "aria-live": "polite" });

  const live = el(
    "div",
    { class: "widget-live mask-grid" },
    el("h3", {}, "Mask grid"),
    el(
      "p",
      { class: "explorer-intro", id: `${uid}-grid-note` },
      "Each button is one (query, key) pair: 0 lets the query attend the key, −∞ masks it. Click a cell or press " +
        "Enter or Space on it; the arrow keys move between cells.",
    ),
    presetRow,
    el("div", { class: "table-scroll" }, grid),
    policyBox,
    el("h4", { id: `${uid}-heat-title` }, "Attention weights (the deeper the shade, the larger the weight)"),
    heatmap,
    problem,
    el("h4", {}, "Outputs"),
    el("div", { class: "table-scroll" }, outputTable),
    status,
  );
  for (const child of Array.from(widget.children)) child.hidden = true;
  widget.append(live);

  function bitsOf(row) {
    return row.reduce((bits, allowed, j) => (allowed ? bits | (1 << j) : bits), 0);
  }

  /** Query i's weights and output for the current mask, and whether the row is fully masked. */
  function rowResult(i) {
    const bits = bitsOf(state.mask[i]);
    if (bits !== 0) return { dead: false, ...config.rows[i][bits] };
    if (state.policy === "raise") return { dead: true, weights: null, output: null };
    return { dead: true, ...config.dead[state.policy][i] };
  }

  function draw() {
    const results = Array.from({ length: nQ }, (_, i) => rowResult(i));
    const deadRows = results.flatMap((result, i) => (result.dead ? [i] : []));
    const raised = state.policy === "raise" && deadRows.length > 0;
    const error = raised ? config.errors[String(deadRows.reduce((bits, i) => bits | (1 << i), 0))] : null;

    toggles.forEach((row, i) =>
      row.forEach((button, j) => {
        const allowed = state.mask[i][j];
        button.textContent = allowed ? "0" : "−∞";
        button.setAttribute("aria-pressed", String(allowed));
        button.setAttribute("aria-label", `query ${i}, key ${j}: ${allowed ? "may attend" : "masked"}`);
        button.classList.toggle("is-masked", !allowed);
      }),
    );
    grid.querySelectorAll("tbody tr").forEach((tr, i) => tr.classList.toggle("is-dead", deadRows.includes(i)));

    heatmap.replaceChildren();
    for (let j = 0; j < nK; j += 1) {
      heatmap.append(
        svg("text", { x: LABEL + j * CELL + CELL / 2, y: TOP - 8, class: "heat-label", "text-anchor": "middle" }, `key ${j}`),
      );
    }
    results.forEach((result, i) => {
      const y = TOP + i * CELL;
      heatmap.append(
        svg("text", { x: LABEL - 8, y: y + CELL / 2 + 5, class: "heat-label", "text-anchor": "end" }, `query ${i}`),
      );
      for (let j = 0; j < nK; j += 1) {
        const weight = raised || result.weights === null ? null : result.weights[j];
        const allowed = state.mask[i][j];
        const cell = svg("rect", {
          x: LABEL + j * CELL + 1,
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
        heatmap.append(cell);
        const text = raised ? "—" : weight === null ? "NaN" : weight.toFixed(3);
        heatmap.append(
          svg(
            "text",
            {
              x: LABEL + j * CELL + CELL / 2,
              y: y + CELL / 2 + 5,
              class: `heat-value${Number.isFinite(weight) && weight > 0.55 ? " is-strong" : ""}`,
              "text-anchor": "middle",
              "aria-hidden": "true",
            },
            text,
          ),
        );
      }
      if (result.dead) {
        heatmap.append(
          svg("rect", {
            x: LABEL - 2,
            y: y,
            width: nK * CELL + 2,
            height: CELL,
            rx: 6,
            class: "dead-outline",
            "data-dead-row": i,
          }),
        );
      }
    });

    outputs.replaceChildren(
      ...results.map((result, i) => {
        const text = raised
          ? "none: the call raised"
          : `[${result.output.map((v) => show(v)).join(", ")}]`;
        const note = result.dead ? el("span", { class: "dead-note" }, ` (no key left: ${policyWords(state.policy)})`) : null;
        return el(
          "tr",
          { class: result.dead ? "is-dead" : "", "data-query": i },
          el("th", { scope: "row" }, `query ${i}`),
          el("td", {}, el("span", { "data-output": i }, text), note),
        );
      }),
    );
    problem.hidden = !raised;
    problem.textContent = raised ? `ValueError: ${error}` : "";
    status.textContent = raised
      ? `Error: ${error}`
      : `Weights ${results.map((r) => `[${r.weights.map((v) => show(v)).join(", ")}]`).join(", ")}.`;
  }

  function policyWords(policy) {
    return {
      zero: "zero weights and output",
      nan: "NaN, since 0/0 has no value",
      raise: "an error",
      fill: "uniform weights, the mean of V",
    }[policy];
  }

  draw();
}
