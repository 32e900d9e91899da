// @ts-check
// The attention explorer: edit the query, keys and values of the worked example, toggle the causal mask and
// watch every step (scores → scaled → masked → softmax weights → output) that POST /api/attention computes
// with the qkv library. Nothing is computed here; this module only draws what the server sends.
// On a lesson page it asks the lesson's route (POST /api/lessons/{id}/attention), which sends no numbers
// while they would show an answer of that page the learner has not typed yet; it asks again whenever
// the learner's progress changes, so the steps appear as soon as that answer is in.
import { ApiError, postJson } from "/static/js/api.js";
import { claim, debounce, el, formatNumber, showLive } from "/static/js/widget-kit.js";

const MAX_KEYS = 6;
const KV_LEGEND = "Keys K and values V (one row per position)";

function numberInput(id, value, label) {
  return el("input", { type: "text", inputmode: "decimal", id, value: String(value), "aria-label": label, class: "num", size: 7, autocomplete: "off" });
}

function bar(value, kind) {
  const fill = el("span", { class: `bar-fill bar-${kind}` });
  const clamped = Number.isFinite(value) ? Math.max(0, Math.min(1, Math.abs(value))) : 0;
  fill.style.width = `${(clamped * 100).toFixed(2)}%`; // CSSOM, not a style attribute: allowed by the CSP
  return el("span", { class: "bar", "aria-hidden": "true" }, fill);
}

/** The explorer's fixed parts: boxes for q and for K and V, the mask controls, the status line, the steps. */
function explorerParts(uid) {
  const parts = {
    qBox: el("fieldset", { class: "explorer-q" }, el("legend", {}, "Query q")),
    kvBox: el("fieldset", { class: "explorer-kv" }, el("legend", {}, KV_LEGEND)),
    causalBox: el("input", { type: "checkbox", id: `${uid}-causal` }),
    positionSelect: el("select", { id: `${uid}-position` }),
    addKey: el("button", { type: "button", class: "secondary" }, "Add a position"),
    removeKey: el("button", { type: "button", class: "secondary" }, "Remove the last position"),
    // Announces each new result to screen readers; shown on screen only when it reports a problem.
    status: el("p", { class: "widget-status visually-hidden", "aria-live": "polite" }),
    steps: el("div", { class: "explorer-steps" }),
  };
  parts.maskBox = el(
    "fieldset",
    { class: "explorer-mask" },
    el("legend", {}, "Causal mask"),
    el("div", { class: "check-row" }, parts.causalBox, el("label", { for: `${uid}-causal` }, "Apply the causal mask")),
    el("div", { class: "select-row" }, el("label", { for: `${uid}-position` }, "The query sits at position"), parts.positionSelect),
  );
  return parts;
}

/** The table of keys and values as number boxes, a row per position. */
function kvTable(uid, state) {
  const head = el(
    "tr",
    {},
    el("th", { scope: "col" }, "position"),
    el("th", { scope: "col", colspan: state.K[0]?.length ?? 1 }, "key k"),
    el("th", { scope: "col", colspan: state.V[0]?.length ?? 1 }, "value v"),
  );
  const rows = state.K.map((keyRow, i) =>
    el(
      "tr",
      {},
      el("th", { scope: "row" }, String(i)),
      ...keyRow.map((value, j) => el("td", {}, numberInput(`${uid}-k${i}-${j}`, value, `key ${i} component ${j + 1}`))),
      ...state.V[i].map((value, j) => el("td", {}, numberInput(`${uid}-v${i}-${j}`, value, `value ${i} component ${j + 1}`))),
    ),
  );
  return el("table", { class: "kv-table" }, el("thead", {}, head), el("tbody", {}, ...rows));
}

/** Draw the number boxes and the mask controls for the current state (after a position is added or removed). */
function drawInputs(parts, uid, state) {
  const qRow = el("div", { class: "vector-row" }, ...state.q.map((value, j) => numberInput(`${uid}-q${j}`, value, `q component ${j + 1}`)));
  parts.qBox.replaceChildren(el("legend", {}, "Query q"), qRow);
  parts.kvBox.replaceChildren(el("legend", {}, KV_LEGEND), el("div", { class: "table-scroll" }, kvTable(uid, state)));
  parts.positionSelect.replaceChildren(
    ...state.K.map((_, i) => el("option", { value: i, selected: i === state.causalIndex }, String(i))),
  );
  parts.causalBox.checked = state.causal;
  parts.positionSelect.disabled = !state.causal;
  // aria-disabled rather than disabled: a disabled button would drop the keyboard focus that just pressed it.
  parts.addKey.setAttribute("aria-disabled", String(state.K.length >= MAX_KEYS));
  parts.removeKey.setAttribute("aria-disabled", String(state.K.length <= 1));
}

function readNumber(input, what) {
  const text = input.value.trim();
  const value = Number(text);
  if (text === "" || !Number.isFinite(value)) {
    throw new Error(`${what} must be a number, but it is '${input.value}'.`);
  }
  return value;
}

/** Read every box into the state; throws with a sentence naming the first box that holds no number. */
function readInputs(live, parts, uid, state) {
  const read = (id, what) => readNumber(live.querySelector(`#${uid}-${id}`), what);
  state.q = state.q.map((_, j) => read(`q${j}`, `q component ${j + 1}`));
  state.K = state.K.map((row, i) => row.map((_, j) => read(`k${i}-${j}`, `key ${i} component ${j + 1}`)));
  state.V = state.V.map((row, i) => row.map((_, j) => read(`v${i}-${j}`, `value ${i} component ${j + 1}`)));
  state.causal = parts.causalBox.checked;
  state.causalIndex = Number(parts.positionSelect.value);
}

/** The steps table: a row per key with its score, scaled score, masked score and weight. */
function stepsTable(reply, noteId) {
  const head = el(
    "tr",
    {},
    ...["key", "score q·k", "scaled", "masked", "softmax weight"].map((text) => el("th", { scope: "col" }, text)),
  );
  const rows = reply.weights.map((weight, i) => {
    const allowed = reply.allowed ? reply.allowed[i] : true;
    const heat = el("th", { scope: "row", class: "heat" }, String(i));
    heat.style.setProperty("--w", String(Number.isFinite(weight) ? weight : 0));
    return el(
      "tr",
      { class: allowed ? "" : "is-masked", "data-key": i },
      heat,
      el("td", {}, formatNumber(reply.scores[i])),
      el("td", {}, formatNumber(reply.scaled[i])),
      el("td", { "data-masked": i }, allowed ? formatNumber(reply.masked[i]) : "−∞ (masked)"),
      el("td", { class: "weight-cell", "data-weight": i }, bar(weight, "weight"), " ", formatNumber(weight)),
    );
  });
  return el("table", { class: "steps-table", "aria-describedby": noteId }, el("thead", {}, head), el("tbody", {}, ...rows));
}

/** The output vector, a line per component with a bar scaled to the largest one. */
function outputList(output) {
  const largest = Math.max(1e-12, ...output.map((v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
  const items = output.map((value, j) =>
    el(
      "li",
      { "data-output": j },
      el("span", { class: "output-label" }, `output[${j}]`),
      " ",
      bar(Number.isFinite(value) ? value / largest : 0, "output"),
      " ",
      el("span", { class: "output-value" }, formatNumber(value)),
    ),
  );
  return el("ol", { class: "output-list", start: 0 }, ...items);
}

function drawSteps(parts, uid, reply) {
  const keys = reply.scores.length;
  // A note above the table rather than its <caption>: a caption would scroll sideways with a wide table.
  const note = el(
    "p",
    { class: "steps-note", id: `${uid}-steps-note` },
    `One query against ${keys} ${keys === 1 ? "key" : "keys"}; d_k = ${reply.d_k}, so scores are divided by √${reply.d_k}. ` +
      "The deeper a key's shade, the more weight it gets.",
  );
  const outputText = `[${reply.output.map((v) => formatNumber(v)).join(", ")}]`;
  parts.steps.replaceChildren(
    note,
    el("div", { class: "table-scroll" }, stepsTable(reply, note.id)),
    el("h3", { class: "output-title" }, "Output = weights · V"),
    el("p", { class: "explorer-output", "data-output-vector": "" }, outputText),
    outputList(reply.output),
  );
  parts.steps.hidden = false;
  parts.status.textContent = `Weights [${reply.weights.map((v) => formatNumber(v)).join(", ")}], output ${outputText}.`;
  parts.status.classList.remove("is-error", "is-withheld");
  parts.status.classList.add("visually-hidden");
}

function showWithheld(parts, message) {
  parts.steps.hidden = true;
  parts.status.textContent = message;
  parts.status.classList.remove("is-error", "visually-hidden");
  parts.status.classList.add("is-withheld");
}

function showProblem(parts, message) {
  // The last result belongs to other inputs: take it off the screen rather than leave it looking current.
  parts.steps.hidden = true;
  parts.status.textContent = message;
  parts.status.classList.add("is-error");
  parts.status.classList.remove("visually-hidden", "is-withheld");
}

/**
 * A function that reads the boxes, asks the server for every step and draws the reply; only the reply
 * to the latest request is drawn, so a slow answer never overwrites a newer one.
 */
function computer(live, parts, uid, state, url) {
  let latest = 0;
  return async function compute() {
    const request = ++latest;
    try {
      readInputs(live, parts, uid, state);
    } catch (error) {
      showProblem(parts, `${error.message} The steps appear again once every box holds a number.`);
      return;
    }
    parts.positionSelect.disabled = !state.causal;
    const body = { q: state.q, K: state.K, V: state.V, causal: state.causal, causal_index: state.causalIndex };
    try {
      const reply = await postJson(url, body);
      if (request !== latest) return;
      if (Array.isArray(reply.withheld) && reply.withheld.length > 0) showWithheld(parts, reply.detail);
      else drawSteps(parts, uid, reply);
    } catch (error) {
      if (request !== latest) return;
      showProblem(parts, error instanceof ApiError ? error.message : "The attention step could not be computed.");
    }
  };
}

/** The add and remove buttons change the number of positions, keeping the numbers typed so far. */
function wirePositionButtons(live, parts, uid, state, compute) {
  const change = (allowed, edit) => {
    try {
      readInputs(live, parts, uid, state);
    } catch {
      // keep the last valid numbers
    }
    if (!allowed()) return;
    edit();
    drawInputs(parts, uid, state);
    compute();
  };
  parts.addKey.addEventListener("click", () =>
    change(
      () => state.K.length < MAX_KEYS,
      () => {
        state.K.push(state.K[state.K.length - 1].map(() => 0));
        state.V.push(state.V[state.V.length - 1].map(() => 0));
      },
    ),
  );
  parts.removeKey.addEventListener("click", () =>
    change(
      () => state.K.length > 1,
      () => {
        state.K.pop();
        state.V.pop();
        state.causalIndex = Math.min(state.causalIndex, state.K.length - 1);
      },
    ),
  );
}

/**
 * Turn one `[data-widget="attention-explorer"]` into a live explorer. `ctx` (from the lesson page) gives
 * the lesson's API and the learner's progress store; without it the explorer uses the plain /api/attention.
 */
export function mount(element, ctx = {}) {
  const claimed = claim(element, (c) => Array.isArray(c.q) && Array.isArray(c.K) && Array.isArray(c.V));
  if (!claimed) return;
  const { config, uid } = claimed;
  const state = {
    q: config.q.slice(),
    K: config.K.map((row) => row.slice()),
    V: config.V.map((row) => row.slice()),
    causal: Boolean(config.causal),
    causalIndex: Number.isInteger(config.causal_index) ? config.causal_index : 0,
  };
  const parts = explorerParts(uid);
  const live = el(
    "div",
    { class: "widget-live explorer" },
    el("h3", { class: "explorer-title" }, "Attention explorer"),
    el("p", { class: "widget-intro" }, "Change the query, the keys or the values, or switch on the causal mask; every step below is recomputed."),
    el("div", { class: "explorer-inputs" }, parts.qBox, parts.kvBox, el("div", { class: "button-row" }, parts.addKey, parts.removeKey), parts.maskBox),
    parts.status,
    parts.steps,
  );
  showLive(element, live);
  const url = ctx.api ? `${ctx.api}/attention` : "/api/attention";
  const compute = computer(live, parts, uid, state, url);
  const computeSoon = debounce(compute, 150);
  live.addEventListener("input", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.classList.contains("num")) computeSoon();
  });
  parts.causalBox.addEventListener("change", compute);
  parts.positionSelect.addEventListener("change", compute);
  wirePositionButtons(live, parts, uid, state, compute);
  // A newly typed answer (or another variant) may change what the server withholds.
  ctx.progress?.onChange(() => compute());
  drawInputs(parts, uid, state);
  compute();
}
