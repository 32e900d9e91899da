// @ts-check
// The residual block: a pre-norm transformer block drawn as SVG, the residual stream as the main line and
// each arrow labelled with its shape. Switching the residual connections or the layer norms off, or making X
// ten times larger, picks another of the outputs the server computed (qkv.attention in each head, layer norm,
// tanh-GELU MLP); this module only draws them.
import { checkRow, claim, debounce, el, formatCompact, showLive, svg } from "/static/js/widget-kit.js";

/** The arrow head that the diagram's lines end in, as an SVG marker with this id. */
function arrowHead(id) {
  const marker = svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "block-head" }));
  return svg("defs", {}, marker);
}

function box(x, y, w, label, kind) {
  const group = svg("g", { class: `block-box ${kind}` });
  group.append(svg("rect", { x, y, width: w, height: 30, rx: 6 }));
  group.append(svg("text", { x: x + w / 2, y: y + 19, class: "block-label" }, label));
  return group;
}

function arrow(x1, y1, x2, y2, kind, label, lx, ly) {
  const group = svg("g", { class: `block-arrow ${kind}` });
  group.append(svg("line", { x1, y1, x2, y2, "marker-end": "url(#block-head)" }));
  if (label) group.append(svg("text", { x: lx, y: ly, class: "block-shape" }, label));
  return group;
}

function diagram(n, d, state) {
  const root = svg("svg", {
    viewBox: "0 0 640 170",
    class: "block-diagram",
    role: "img",
    "aria-label":
      `Pre-norm block: X (${n}, ${d}) runs along the residual stream; LN1 then attention (${n}, ${d}) is ` +
      `added to it; LN2 then the MLP, widening to (${n}, ${4 * d}) and back to (${n}, ${d}), is added again. ` +
      `Residual connections ${state.residual ? "on" : "off"}, layer norms ${state.norm ? "on" : "off"}.`,
  });
  root.append(arrowHead("block-head"));
  const stream = state.residual ? "is-on" : "is-off";
  const norm = state.norm ? "is-on" : "is-off";
  // The residual stream: the main line along the bottom.
  root.append(svg("text", { x: 8, y: 144, class: "block-label start" }, "X"));
  root.append(arrow(26, 140, 180, 140, stream, `(${n}, ${d})`, 100, 158));
  root.append(svg("circle", { cx: 192, cy: 140, r: 11, class: "block-add" }));
  root.append(svg("text", { x: 192, y: 145, class: "block-label" }, "+"));
  root.append(arrow(203, 140, 420, 140, stream, `(${n}, ${d})`, 320, 158));
  root.append(svg("circle", { cx: 432, cy: 140, r: 11, class: "block-add" }));
  root.append(svg("text", { x: 432, y: 145, class: "block-label" }, "+"));
  root.append(arrow(443, 140, 590, 140, "is-on", `(${n}, ${d})`, 520, 158));
  root.append(svg("text", { x: 596, y: 144, class: "block-label start" }, "out"));
  // Branch 1: LN1 -> attention -> back into the first +.
  root.append(arrow(40, 140, 40, 62, "is-on"));
  root.append(box(20, 30, 50, "LN₁", `norm ${norm}`));
  root.append(arrow(70, 45, 90, 45, "is-on", `(${n}, ${d})`, 80, 24));
  root.append(box(92, 30, 86, "attention", "sublayer"));
  root.append(arrow(178, 45, 192, 45, "is-on"));
  root.append(arrow(192, 45, 192, 127, "is-on", `(${n}, ${d})`, 222, 95));
  // Branch 2: LN2 -> MLP (widening to 4d) -> back into the second +.
  root.append(arrow(250, 140, 250, 62, "is-on"));
  root.append(box(230, 30, 50, "LN₂", `norm ${norm}`));
  root.append(arrow(280, 45, 300, 45, "is-on"));
  root.append(box(302, 30, 100, `MLP (${n}, ${4 * d})`, "sublayer"));
  root.append(arrow(402, 45, 432, 45, "is-on"));
  root.append(arrow(432, 45, 432, 127, "is-on", `(${n}, ${d})`, 462, 95));
  return root;
}

// The same block drawn top to bottom, for narrow screens: the residual stream runs down the left edge.
function diagramTall(n, d, state) {
  const root = svg("svg", {
    viewBox: "0 0 300 420",
    class: "block-diagram is-tall",
    role: "img",
    "aria-label":
      `Pre-norm block: X (${n}, ${d}) runs down the residual stream; LN1 then attention (${n}, ${d}) is ` +
      `added to it; LN2 then the MLP, widening to (${n}, ${4 * d}) and back to (${n}, ${d}), is added again. ` +
      `Residual connections ${state.residual ? "on" : "off"}, layer norms ${state.norm ? "on" : "off"}.`,
  });
  root.append(arrowHead("block-head-tall"));
  const head = (group) => {
    for (const line of group.querySelectorAll("line")) line.setAttribute("marker-end", "url(#block-head-tall)");
    return group;
  };
  const stream = state.residual ? "is-on" : "is-off";
  const norm = state.norm ? "is-on" : "is-off";
  root.append(svg("text", { x: 40, y: 18, class: "block-label" }, "X"));
  root.append(head(arrow(40, 26, 40, 158, stream, `(${n}, ${d})`, 72, 120)));
  root.append(svg("circle", { cx: 40, cy: 170, r: 11, class: "block-add" }));
  root.append(svg("text", { x: 40, y: 175, class: "block-label" }, "+"));
  root.append(head(arrow(40, 181, 40, 328, stream, `(${n}, ${d})`, 72, 290)));
  root.append(svg("circle", { cx: 40, cy: 340, r: 11, class: "block-add" }));
  root.append(svg("text", { x: 40, y: 345, class: "block-label" }, "+"));
  root.append(head(arrow(40, 351, 40, 396, "is-on")));
  root.append(svg("text", { x: 40, y: 414, class: "block-label" }, `out (${n}, ${d})`));
  // Branch 1.
  root.append(head(arrow(40, 60, 78, 60, "is-on")));
  root.append(box(80, 45, 56, "LN₁", `norm ${norm}`));
  root.append(head(arrow(136, 60, 158, 60, "is-on")));
  root.append(box(160, 45, 110, "attention", "sublayer"));
  root.append(svg("line", { x1: 215, y1: 75, x2: 215, y2: 170, class: "block-plain" }));
  root.append(head(arrow(215, 170, 53, 170, "is-on", `(${n}, ${d})`, 150, 162)));
  // Branch 2.
  root.append(head(arrow(40, 230, 78, 230, "is-on")));
  root.append(box(80, 215, 56, "LN₂", `norm ${norm}`));
  root.append(head(arrow(136, 230, 158, 230, "is-on")));
  root.append(box(160, 215, 130, `MLP (${n}, ${4 * d})`, "sublayer"));
  root.append(svg("line", { x1: 225, y1: 245, x2: 225, y2: 340, class: "block-plain" }));
  root.append(head(arrow(225, 340, 53, 340, "is-on", `(${n}, ${d})`, 150, 332)));
  return root;
}

/** The three switches: residual connections, layer norms, X ten times larger. */
function switches(uid, state, redraw) {
  const set = (key, value) => {
    state[key] = value;
    redraw();
  };
  return el(
    "div",
    { class: "block-controls" },
    checkRow(`${uid}-residual`, "Residual connections", (on) => set("residual", on), true).row,
    checkRow(`${uid}-norm`, "Layer norms", (on) => set("norm", on), true).row,
    checkRow(`${uid}-scale`, "X ten times larger", (on) => set("scale", on ? 10 : 1)).row,
  );
}

/** The norms and cosines of each token's row under the current switches. */
function normsTable(view) {
  const head = el(
    "tr",
    {},
    el("th", { scope: "col" }, "token"),
    el("th", { scope: "col" }, "‖x‖"),
    el("th", { scope: "col" }, "‖out‖"),
    el("th", { scope: "col" }, "‖out − x‖"),
    el("th", { scope: "col", title: "cosine of the output row with the input row" }, "cos"),
  );
  const rows = view.row_norms.map((norm, i) =>
    el(
      "tr",
      { "data-token": i },
      el("th", { scope: "row" }, String(i)),
      el("td", {}, formatCompact(view.input_norms[i])),
      el("td", { "data-norm": i }, formatCompact(norm)),
      el("td", {}, formatCompact(view.update_norms[i])),
      el("td", { "data-cosine": i }, formatCompact(view.cosines[i])),
    ),
  );
  return el("table", { class: "block-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

/** Draw the view the switches pick: the diagram (tall on a narrow screen), the table, a sentence. */
function drawView(parts, config, state) {
  const view = config.views.find((v) => v.residual === state.residual && v.norm === state.norm && v.scale === state.scale);
  if (!view) return;
  const narrow = parts.picture.clientWidth > 0 && parts.picture.clientWidth < 480;
  parts.picture.replaceChildren((narrow ? diagramTall : diagram)(config.n, config.d, state));
  parts.table.replaceChildren(normsTable(view));
  parts.summary.textContent =
    `Residual ${state.residual ? "on" : "off"}, layer norms ${state.norm ? "on" : "off"}: ` +
    `cosines ${view.cosines.map((c) => formatCompact(c)).join(", ")}.`;
}

/** Turn one `[data-widget="residual-block"]` into the live block. */
export function mount(element) {
  const claimed = claim(element, (c) => Array.isArray(c.views));
  if (!claimed) return;
  const { config, uid } = claimed;
  const state = { residual: true, norm: true, scale: 1 };
  const parts = {
    picture: el("div", { class: "block-picture" }),
    table: el("div", { class: "table-scroll" }),
    summary: el("p", { class: "visually-hidden", "aria-live": "polite" }),
  };
  const draw = () => drawView(parts, config, state);
  showLive(
    element,
    el(
      "div",
      { class: "widget-live block" },
      el("h3", {}, "A pre-norm transformer block"),
      el("p", {}, "The bottom line is the residual stream; each sub-layer reads a normalised copy and adds its result."),
      parts.picture,
      switches(uid, state, draw),
      parts.table,
      parts.summary,
    ),
  );
  window.addEventListener("resize", debounce(draw, 150));
  draw();
}
