// @ts-check
// The softmax widget: one slider per score; the weights (SVG bars) and the output vector follow. A switch adds 1000
// to every score and compares the plain formula e^s / Σe^s (which overflows to ∞/∞ = NaN) with the one that
// subtracts the row's maximum first. The first drawing is the server's (qkv.softmax); after a move this module
// recomputes the same trivial arithmetic, exp and divide, which the browser test checks against qkv.
import { checkRow, claim, el, formatNumber, showLive, svg } from "/static/js/widget-kit.js";

const WIDTH = 480;
const HEIGHT = 200;

/** e^(s − max) / Σ e^(s − max): finite for any finite scores. */
function stableSoftmax(scores) {
  const top = Math.max(...scores);
  const exps = scores.map((s) => Math.exp(s - top));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

/** e^s / Σ e^s, as written in the textbook: overflows for large scores. */
function plainSoftmax(scores) {
  const exps = scores.map((s) => Math.exp(s));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

function weightChart(weights, scores) {
  const top = 24;
  const base = HEIGHT - 40;
  const slot = WIDTH / weights.length;
  const picture = svg("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: "bars-chart",
    role: "img",
    "aria-label": `Weights ${weights.map((w) => formatNumber(w, 3)).join(", ")}.`,
  });
  picture.append(svg("line", { x1: 0, x2: WIDTH, y1: base, y2: base, class: "bars-axis" }));
  weights.forEach((weight, j) => {
    const finite = Number.isFinite(weight);
    const h = finite ? Math.max(1, weight * (base - top)) : 0;
    const x = j * slot + slot * 0.2;
    const middle = (j + 0.5) * slot;
    picture.append(
      svg("rect", { x: x.toFixed(1), y: (base - h).toFixed(1), width: (slot * 0.6).toFixed(1), height: h.toFixed(1), class: "bars-bar" }),
      svg("text", { x: middle, y: base - h - 6, "text-anchor": "middle", class: "bars-value" }, finite ? formatNumber(weight, 3) : "NaN"),
      svg("text", { x: middle, y: base + 26, "text-anchor": "middle", class: "bars-label" }, `s${j + 1} = ${formatNumber(scores[j], 2)}`),
    );
  });
  return picture;
}

/** One slider per score; moving one sets that score and redraws. */
function scoreSliders(state, uid, redraw) {
  return state.scores.map((score, j) => {
    const input = el("input", { type: "range", id: `${uid}-s${j}`, min: -4, max: 4, step: 0.01, value: score });
    const shown = el("output", { for: input.id, class: "slider-value", "data-score": j });
    input.addEventListener("input", () => {
      state.scores[j] = Number(input.value);
      state.server = false;
      redraw();
    });
    const row = el("div", { class: "slider-row" }, el("label", { for: input.id }, `score s${j + 1}`), input, shown);
    return { row, shown };
  });
}

/** The weights and output for the current scores: the server's before any move, the same arithmetic after. */
function currentNumbers(config, state) {
  const shift = state.big ? config.shift ?? 1000 : 0;
  const scores = state.scores.map((s) => s + shift);
  const weights = state.server ? (state.big ? config.shifted_weights : config.weights) : stableSoftmax(scores);
  const output = state.server && !state.big
    ? config.output
    : config.V[0].map((_, c) => config.V.reduce((sum, row, j) => sum + weights[j] * row[c], 0));
  return { shift, scores, weights, output };
}

function drawOutput(line, weights, output) {
  line.replaceChildren(
    "Weights ",
    el("strong", { "data-weights": "" }, `[${weights.map((w) => formatNumber(w)).join(", ")}]`),
    ", sum ",
    formatNumber(weights.reduce((a, b) => a + b, 0), 6),
    ". Output o = Σ wⱼ vⱼ = ",
    el("strong", { "data-output": "" }, `[${output.map((v) => formatNumber(v)).join(", ")}]`),
    ".",
  );
}

/** With 1000 added, what the plain formula gives next to the stable one; nothing otherwise. */
function drawOverflow(line, state, scores, shift) {
  if (!state.big) {
    line.replaceChildren();
    return;
  }
  const plain = plainSoftmax(scores).map((w) => (Number.isFinite(w) ? formatNumber(w) : "NaN"));
  line.replaceChildren(
    "Plain formula e^s / Σe^s: ",
    el("strong", { "data-plain": "" }, `[${plain.join(", ")}]`),
    ` (e^${formatNumber(Math.max(...scores), 2)} is too large for a float: ∞/∞). Subtracting the maximum first gives the weights above, the same as without the ${shift}.`,
  );
}

/** Turn one `[data-widget="softmax-bars"]` into a live widget. */
export function mount(element) {
  const claimed = claim(element, (c) => Array.isArray(c.scores) && Array.isArray(c.V) && Array.isArray(c.weights));
  if (!claimed) return;
  const { config, uid } = claimed;
  const state = { scores: config.scores.slice(), big: false, server: true };
  const parts = {
    chart: el("div", { class: "bars-figure" }),
    outputLine: el("p", { class: "bars-output", "aria-live": "polite" }),
    bigLine: el("p", { class: "bars-big", "aria-live": "polite" }),
  };
  const draw = () => {
    const { shift, scores, weights, output } = currentNumbers(config, state);
    sliders.forEach(({ shown }, j) => {
      shown.textContent = formatNumber(scores[j], 2);
    });
    parts.chart.replaceChildren(weightChart(weights, scores));
    drawOutput(parts.outputLine, weights, output);
    drawOverflow(parts.bigLine, state, scores, shift);
  };
  const sliders = scoreSliders(state, uid, draw);
  const big = checkRow(`${uid}-big`, `Add ${config.shift ?? 1000} to every score`, (checked) => {
    state.big = checked;
    draw();
  });
  showLive(
    element,
    el("div", { class: "widget-live bars" }, el("div", { class: "sliders" }, ...sliders.map((s) => s.row)), big.row, parts.chart, parts.outputLine, parts.bigLine),
  );
  draw();
}
