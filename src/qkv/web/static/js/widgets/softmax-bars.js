// The softmax widget: one slider per score; the weights (SVG bars) and the output vector follow. A switch adds 1000
// to every score and compares the plain formula e^s / Σe^s (which overflows to ∞/∞ = NaN) with the one that
// subtracts the row's maximum first. The first drawing is the server's (qkv.softmax); after a move this module
// recomputes the same trivial arithmetic, exp and divide, which the browser test checks against qkv.
import { el, formatNumber } from "../format.js";

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 480;
const HEIGHT = 200;
let barsCount = 0;

function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

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
    picture.append(
      svg("rect", { x: x.toFixed(1), y: (base - h).toFixed(1), width: (slot * 0.6).toFixed(1), height: h.toFixed(1), class: "bars-bar" }),
    );
    picture.append(
      svg("text", { x: (j + 0.5) * slot, y: base - h - 6, "text-anchor": "middle", class: "bars-value" }, finite ? formatNumber(weight, 3) : "NaN"),
    );
    picture.append(
      svg("text", { x: (j + 0.5) * slot, y: base + 26, "text-anchor": "middle", class: "bars-label" }, `s${j + 1} = ${formatNumber(scores[j], 2)}`),
    );
  });
  return picture;
}

/** Turn one `[data-widget="softmax-bars"]` into a live widget. */
export function mount(widget) {
  if (widget.dataset.mounted) return;
  let config;
  try {
    config = JSON.parse(widget.dataset.config ?? "{}");
  } catch {
    return; // keep the server-rendered table
  }
  if (!Array.isArray(config.scores) || !Array.isArray(config.V) || !Array.isArray(config.weights)) return;
  widget.dataset.mounted = "yes";
  barsCount += 1;
  const uid = `bars${barsCount}`;
  const state = { scores: config.scores.slice(), big: false, server: true };

  const sliders = state.scores.map((score, j) => {
    const input = el("input", { type: "range", id: `${uid}-s${j}`, min: -4, max: 4, step: 0.01, value: score });
    const shown = el("output", { for: input.id, class: "slider-value", "data-score": j });
    input.addEventListener("input", () => {
      state.scores[j] = Number(input.value);
      state.server = false;
      draw();
    });
    return { input, shown };
  });
  const bigBox = el("input", { type: "checkbox", id: `${uid}-big` });
  bigBox.addEventListener("change", () => {
    state.big = bigBox.checked;
    draw();
  });
  const chart = el("div", { class: "bars-figure" });
  const outputLine = el("p", { class: "bars-output", "aria-live": "polite" });
  const bigLine = el("p", { class: "bars-big", "aria-live": "polite" });
  const live = el(
    "div",
    { class: "widget-live bars" },
    el(
      "div",
      { class: "sliders" },
      ...sliders.map(({ input, shown }, j) =>
        el("div", { class: "slider-row" }, el("label", { for: input.id }, `score s${j + 1}`), input, shown),
      ),
    ),
    el("div", { class: "check-row" }, bigBox, el("label", { for: bigBox.id }, `Add ${config.shift ?? 1000} to every score`)),
    chart,
    outputLine,
    bigLine,
  );
  for (const child of Array.from(widget.children)) child.hidden = true;
  widget.append(live);

  function draw() {
    const shift = state.big ? config.shift ?? 1000 : 0;
    const scores = state.scores.map((s) => s + shift);
    // Before any move the numbers are the server's (qkv); after a move, the same arithmetic here.
    const weights = state.server ? (state.big ? config.shifted_weights : config.weights) : stableSoftmax(scores);
    const output = state.server && !state.big
      ? config.output
      : config.V[0].map((_, c) => config.V.reduce((sum, row, j) => sum + weights[j] * row[c], 0));
    sliders.forEach(({ shown }, j) => {
      shown.textContent = formatNumber(scores[j], 2);
    });
    chart.replaceChildren(weightChart(weights, scores));
    outputLine.replaceChildren(
      "Weights ",
      el("strong", { "data-weights": "" }, `[${weights.map((w) => formatNumber(w)).join(", ")}]`),
      ", sum ",
      formatNumber(weights.reduce((a, b) => a + b, 0), 6),
      ". Output o = Σ wⱼ vⱼ = ",
      el("strong", { "data-output": "" }, `[${output.map((v) => formatNumber(v)).join(", ")}]`),
      ".",
    );
    if (state.big) {
      const plain = plainSoftmax(scores);
      bigLine.replaceChildren(
        "Plain formula e^s / Σe^s: ",
        el("strong", { "data-plain": "" }, `[${plain.map((w) => (Number.isFinite(w) ? formatNumber(w) : "NaN")).join(", ")}]`),
        ` (e^${formatNumber(Math.max(...scores), 2)} is too large for a float: ∞/∞). Subtracting the maximum first gives the weights above, the same as without the ${shift}.`,
      );
    } else {
      bigLine.replaceChildren();
    }
  }
  draw();
}
