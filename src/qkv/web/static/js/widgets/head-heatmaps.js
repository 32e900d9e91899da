// Head heatmaps: the same short sequence seen by 1, 2 or 4 heads. One SVG heatmap of attention weights per
// head, side by side, and the shapes at each step. Every number was computed by the server (qkv.attention on
// the heads' columns) for each choice of heads and mask; this module only picks a view and draws it.
import { el, formatCompact } from "../format.js";

const SVG = "http://www.w3.org/2000/svg";
const CELL = 34;
const LABEL = 44;
let count = 0;

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function heatmap(tokens, weights, index) {
  const n = tokens.length;
  const size = LABEL + n * CELL;
  const title = `head ${index}`;
  const root = svg("svg", {
    viewBox: `0 0 ${size} ${size + 18}`,
    width: size,
    height: size + 18,
    role: "img",
    class: "heatmap",
    "aria-label": `${title}: ${weights
      .map((row, i) => `${tokens[i]} attends ${row.map((w, j) => `${formatCompact(w, 2)} to ${tokens[j]}`).join(", ")}`)
      .join("; ")}`,
  });
  root.append(svg("text", { x: LABEL, y: 12, class: "heatmap-title" }, title));
  tokens.forEach((token, j) => {
    root.append(svg("text", { x: LABEL + j * CELL + CELL / 2, y: 30, class: "heatmap-key" }, token));
  });
  weights.forEach((row, i) => {
    const y = 36 + i * CELL;
    root.append(svg("text", { x: LABEL - 4, y: y + CELL / 2 + 4, class: "heatmap-query" }, tokens[i]));
    row.forEach((w, j) => {
      const x = LABEL + j * CELL;
      root.append(svg("rect", { x, y, width: CELL - 2, height: CELL - 2, class: "heatmap-frame" }));
      root.append(
        svg("rect", { x, y, width: CELL - 2, height: CELL - 2, class: "heatmap-cell", "fill-opacity": w.toFixed(3) }),
      );
      root.append(
        svg(
          "text",
          { x: x + (CELL - 2) / 2, y: y + CELL / 2 + 3, class: w > 0.55 ? "heatmap-value on-strong" : "heatmap-value" },
          formatCompact(w, 2),
        ),
      );
    });
  });
  return root;
}

/** Turn one `[data-widget="head-heatmaps"]` into the live heads view. */
export function mount(widget) {
  if (widget.dataset.mounted) return;
  let config;
  try {
    config = JSON.parse(widget.dataset.config ?? "{}");
  } catch {
    return;
  }
  if (!Array.isArray(config.views) || !Array.isArray(config.tokens)) return;
  widget.dataset.mounted = "yes";
  count += 1;
  const uid = `heads${count}`;
  const choices = [...new Set(config.views.map((view) => view.h))];
  const state = { h: config.initial, causal: false };

  const radios = choices.map((h) => {
    const input = el("input", { type: "radio", name: `${uid}-h`, id: `${uid}-h${h}`, value: h });
    input.checked = h === state.h;
    return el("span", { class: "choice-chip" }, input, el("label", { for: `${uid}-h${h}` }, `${h} head${h > 1 ? "s" : ""}`));
  });
  const causalBox = el("input", { type: "checkbox", id: `${uid}-causal` });
  const controls = el(
    "div",
    { class: "heads-controls" },
    el("fieldset", { class: "heads-choice" }, el("legend", {}, `Split d_model = ${config.d_model} into`), ...radios),
    el("div", { class: "check-row" }, causalBox, el("label", { for: `${uid}-causal` }, "Causal mask in every head")),
  );
  const maps = el("div", { class: "heatmaps" });
  const shapes = el("ol", { class: "shape-steps" });
  const summary = el("p", { class: "visually-hidden", "aria-live": "polite" });
  const live = el(
    "div",
    { class: "widget-live heads" },
    el("h3", {}, "One sequence, several heads"),
    el("p", {}, "Each heatmap is one head's weights: a row is a query token, a column the key it attends to."),
    controls,
    maps,
    el("h3", {}, "Shapes at each step"),
    shapes,
    summary,
  );
  for (const child of Array.from(widget.children)) child.hidden = true;
  widget.append(live);

  function draw() {
    const view = config.views.find((v) => v.h === state.h && v.causal === state.causal);
    if (!view) return;
    maps.replaceChildren(...view.weights.map((weights, i) => heatmap(config.tokens, weights, i)));
    shapes.replaceChildren(
      ...view.shapes.map(([label, shape]) =>
        el("li", { "data-shape": shape.join("x") }, el("span", {}, label), " ", el("code", {}, `(${shape.join(", ")})`)),
      ),
    );
    summary.textContent = `${view.h} head${view.h > 1 ? "s" : ""} of d_head = ${view.d_head}${view.causal ? ", causal" : ""}.`;
  }

  for (const radio of live.querySelectorAll(`input[name="${uid}-h"]`)) {
    radio.addEventListener("change", () => {
      state.h = Number(radio.value);
      draw();
    });
  }
  causalBox.addEventListener("change", () => {
    state.causal = causalBox.checked;
    draw();
  });
  draw();
}
