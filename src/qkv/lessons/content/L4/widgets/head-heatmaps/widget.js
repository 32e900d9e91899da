// @ts-check
// Head heatmaps: the same short sequence seen by 1, 2 or 4 heads. One SVG heatmap of attention weights per
// head, side by side, and the shapes at each step. Every number was computed by the server (qkv.attention on
// the heads' columns) for each choice of heads and mask; this module only picks a view and draws it.
import { checkRow, claim, el, formatCompact, showLive, svg } from "/static/js/widget-kit.js";

const CELL = 34;
const LABEL = 44;

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

/** A radio button per number of heads; choosing one calls `onChoose(h)`. */
function headChoice(uid, config, initial, onChoose) {
  const choices = [...new Set(config.views.map((view) => view.h))];
  const chips = choices.map((h) => {
    const input = el("input", { type: "radio", name: `${uid}-h`, id: `${uid}-h${h}`, value: h });
    input.checked = h === initial;
    input.addEventListener("change", () => onChoose(Number(input.value)));
    return el("span", { class: "choice-chip" }, input, el("label", { for: `${uid}-h${h}` }, `${h} head${h > 1 ? "s" : ""}`));
  });
  return el("fieldset", { class: "heads-choice" }, el("legend", {}, `Split d_model = ${config.d_model} into`), ...chips);
}

/** Draw the view for the chosen heads and mask: the heatmaps, the shapes, and a sentence for screen readers. */
function drawView(parts, config, state) {
  const view = config.views.find((v) => v.h === state.h && v.causal === state.causal);
  if (!view) return;
  parts.maps.replaceChildren(...view.weights.map((weights, i) => heatmap(config.tokens, weights, i)));
  parts.shapes.replaceChildren(
    ...view.shapes.map(([label, shape]) =>
      el("li", { "data-shape": shape.join("x") }, el("span", {}, label), " ", el("code", {}, `(${shape.join(", ")})`)),
    ),
  );
  parts.summary.textContent = `${view.h} head${view.h > 1 ? "s" : ""} of d_head = ${view.d_head}${view.causal ? ", causal" : ""}.`;
}

/** Turn one `[data-widget="head-heatmaps"]` into the live heads view. */
export function mount(element) {
  const claimed = claim(element, (c) => Array.isArray(c.views) && Array.isArray(c.tokens));
  if (!claimed) return;
  const { config, uid } = claimed;
  const state = { h: config.initial, causal: false };
  const parts = {
    maps: el("div", { class: "heatmaps" }),
    shapes: el("ol", { class: "shape-steps" }),
    summary: el("p", { class: "visually-hidden", "aria-live": "polite" }),
  };
  const draw = () => drawView(parts, config, state);
  const causal = checkRow(`${uid}-causal`, "Causal mask in every head", (checked) => {
    state.causal = checked;
    draw();
  });
  const choice = headChoice(uid, config, state.h, (h) => {
    state.h = h;
    draw();
  });
  showLive(
    element,
    el(
      "div",
      { class: "widget-live heads" },
      el("h3", {}, "One sequence, several heads"),
      el("p", {}, "Each heatmap is one head's weights: a row is a query token, a column the key it attends to."),
      el("div", { class: "heads-controls" }, choice, causal.row),
      parts.maps,
      el("h3", {}, "Shapes at each step"),
      parts.shapes,
      parts.summary,
    ),
  );
  draw();
}
