// @ts-check
// The score-spread widget: pick d_k and see one random query's raw scores q·k against many random keys next to
// the same scores divided by √d_k, on one shared axis, and the softmax weights each row would give. Every number
// comes from the server's config (computed with qkv.attention_scores and qkv.softmax); this module only draws.
import { claim, el, formatCompact, showLive, svg } from "/static/js/widget-kit.js";

const WIDTH = 640;

/** A round axis limit at or above `value`: 5, 10, 20, 50, 100 … */
function niceLimit(value) {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1e-9)));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function stripPlot(row, limit) {
  const left = 70;
  const right = WIDTH - 20;
  const x = (value) => left + ((value + limit) / (2 * limit)) * (right - left);
  const picture = svg("svg", {
    viewBox: `0 0 ${WIDTH} 150`,
    class: "spread-strip",
    role: "img",
    "aria-label": `Raw scores spread from ${formatCompact(Math.min(...row.raw), 2)} to ${formatCompact(Math.max(...row.raw), 2)}; scaled scores from ${formatCompact(Math.min(...row.scaled), 2)} to ${formatCompact(Math.max(...row.scaled), 2)}.`,
  });
  const lanes = [
    { label: "raw", values: row.raw, y: 40, kind: "raw" },
    { label: "÷ √d_k", values: row.scaled, y: 95, kind: "scaled" },
  ];
  for (const lane of lanes) {
    picture.append(svg("line", { x1: left, x2: right, y1: lane.y, y2: lane.y, class: "spread-lane" }));
    picture.append(svg("text", { x: 4, y: lane.y + 5, class: "spread-label" }, lane.label));
    lane.values.forEach((value, i) => {
      const jitter = ((i * 7) % 11) - 5; // a fixed offset per key, so dots on the same spot stay visible
      picture.append(svg("circle", { cx: x(value).toFixed(1), cy: lane.y + jitter, r: 4, class: `spread-dot dot-${lane.kind}` }));
    });
  }
  for (const tick of [-limit, -limit / 2, 0, limit / 2, limit]) {
    picture.append(svg("line", { x1: x(tick), x2: x(tick), y1: 118, y2: 124, class: "spread-tick" }));
    picture.append(svg("text", { x: x(tick), y: 140, class: "spread-tick-label", "text-anchor": "middle" }, formatCompact(tick, 1)));
  }
  return picture;
}

function weightBars(weights, kind, label) {
  const left = 70;
  const right = WIDTH - 20;
  const top = 8;
  const height = 70;
  const width = (right - left) / weights.length;
  const picture = svg("svg", {
    viewBox: `0 0 ${WIDTH} 90`,
    class: "spread-weights",
    role: "img",
    "aria-label": `${label}: the largest of ${weights.length} weights is ${formatCompact(Math.max(...weights), 3)}.`,
  });
  picture.append(svg("text", { x: 4, y: top + height / 2 + 5, class: "spread-label" }, kind === "raw" ? "raw" : "÷ √d_k"));
  picture.append(svg("line", { x1: left, x2: right, y1: top + height, y2: top + height, class: "spread-lane" }));
  weights.forEach((weight, i) => {
    const h = Math.max(0.5, weight * height);
    picture.append(
      svg("rect", {
        x: (left + i * width + 0.5).toFixed(1),
        y: (top + height - h).toFixed(1),
        width: Math.max(1, width - 1).toFixed(1),
        height: h.toFixed(1),
        class: `spread-bar dot-${kind}`,
      }),
    );
  });
  return picture;
}

/** The key-size slider with the size it points at. */
function sizeSlider(uid, rows) {
  const slider = el("input", { type: "range", id: `${uid}-size`, min: 0, max: rows.length - 1, step: 1, value: Math.min(2, rows.length - 1) });
  const shown = el("output", { for: `${uid}-size`, class: "slider-value" });
  const row = el("div", { class: "slider-row" }, el("label", { for: `${uid}-size` }, "key size d_k"), slider, shown);
  return { slider, shown, row };
}

function drawSummary(summary, row, queries) {
  summary.replaceChildren(
    `d_k = ${row.d_k}, √d_k = ${formatCompact(row.root, 3)}. Over ${queries} queries, the raw scores spread by `,
    el("strong", { "data-spread": "raw" }, formatCompact(row.raw_spread, 2)),
    "; divided by √d_k, by ",
    el("strong", { "data-spread": "scaled" }, formatCompact(row.scaled_spread, 2)),
    ". Largest weight: ",
    el("strong", { "data-largest": "raw" }, formatCompact(Math.max(...row.raw_weights), 3)),
    " from the raw scores, ",
    el("strong", { "data-largest": "scaled" }, formatCompact(Math.max(...row.scaled_weights), 3)),
    " from the scaled ones.",
  );
}

/** Turn one `[data-widget="score-spread"]` into a live widget. */
export function mount(element) {
  const claimed = claim(element, (c) => Array.isArray(c.rows) && c.rows.length > 0);
  if (!claimed) return;
  const { config, uid } = claimed;
  const rows = config.rows;
  const limit = niceLimit(Math.max(...rows.flatMap((row) => row.raw.map(Math.abs))));
  const size = sizeSlider(uid, rows);
  const summary = el("p", { class: "spread-summary", "aria-live": "polite" });
  const strip = el("div", { class: "spread-figure" });
  const bars = el("div", { class: "spread-figure" });
  showLive(
    element,
    el(
      "div",
      { class: "widget-live spread" },
      size.row,
      summary,
      el("h3", { class: "spread-heading" }, `One query against ${config.keys} keys: each dot is a score`),
      strip,
      el("h3", { class: "spread-heading" }, "The softmax weights each row would give (one bar per key)"),
      bars,
    ),
  );

  function draw() {
    const row = rows[Number(size.slider.value)];
    size.shown.textContent = String(row.d_k);
    size.slider.setAttribute("aria-valuetext", `d_k = ${row.d_k}`);
    drawSummary(summary, row, config.queries);
    strip.replaceChildren(stripPlot(row, limit));
    bars.replaceChildren(
      weightBars(row.raw_weights, "raw", "Weights from the raw scores"),
      weightBars(row.scaled_weights, "scaled", "Weights from the scaled scores"),
    );
  }
  size.slider.addEventListener("input", draw);
  draw();
}
