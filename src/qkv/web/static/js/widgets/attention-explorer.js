// The attention explorer: edit the query, keys and values of the worked example, toggle the causal mask and
// watch every step (scores → scaled → masked → softmax weights → output) that POST /api/attention computes
// with the qkv library. Nothing is computed here; this module only draws what the server sends.
import { ApiError, postJson } from "../api.js";
import { debounce, el, formatNumber } from "../format.js";

const MAX_KEYS = 6;
let explorerCount = 0;

function numberInput(id, value, label) {
  return el("input", {
    type: "text",
    inputmode: "decimal",
    id,
    value: String(value),
    "aria-label": label,
    class: "num",
    size: 7,
    autocomplete: "off",
  });
}

function bar(value, kind) {
  const fill = el("span", { class: `bar-fill bar-${kind}` });
  const clamped = Number.isFinite(value) ? Math.max(0, Math.min(1, Math.abs(value))) : 0;
  fill.style.width = `${(clamped * 100).toFixed(2)}%`; // CSSOM, not a style attribute: allowed by the CSP
  return el("span", { class: "bar", "aria-hidden": "true" }, fill);
}

/** Turn one `[data-widget="attention-explorer"]` into a live explorer. */
export function mount(widget) {
  if (widget.dataset.mounted) return;
  let config;
  try {
    config = JSON.parse(widget.dataset.config ?? "{}");
  } catch {
    return;
  }
  if (!Array.isArray(config.q) || !Array.isArray(config.K) || !Array.isArray(config.V)) return;
  widget.dataset.mounted = "yes";
  explorerCount += 1;
  const uid = `exp${explorerCount}`;

  const state = {
    q: config.q.slice(),
    K: config.K.map((row) => row.slice()),
    V: config.V.map((row) => row.slice()),
    causal: Boolean(config.causal),
    causalIndex: Number.isInteger(config.causal_index) ? config.causal_index : 0,
  };

  const qBox = el("fieldset", { class: "explorer-q" }, el("legend", {}, "Query q"));
  const kvBox = el("fieldset", { class: "explorer-kv" }, el("legend", {}, "Keys K and values V (one row per position)"));
  const causalBox = el("input", { type: "checkbox", id: `${uid}-causal` });
  const positionSelect = el("select", { id: `${uid}-position` });
  const addKey = el("button", { type: "button", class: "secondary" }, "Add a position");
  const removeKey = el("button", { type: "button", class: "secondary" }, "Remove the last position");
  const maskBox = el(
    "fieldset",
    { class: "explorer-mask" },
    el("legend", {}, "Causal mask"),
    el("div", { class: "check-row" }, causalBox, el("label", { for: `${uid}-causal` }, "Apply the causal mask")),
    el(
      "div",
      { class: "select-row" },
      el("label", { for: `${uid}-position` }, "The query sits at position"),
      positionSelect,
    ),
  );
  // Announces each new result to screen readers; shown on screen only when it reports a problem.
  const status = el("p", { class: "widget-status visually-hidden", "aria-live": "polite" });
  const steps = el("div", { class: "explorer-steps" });
  const live = el(
    "div",
    { class: "widget-live explorer" },
    el("h3", { class: "explorer-title" }, "Attention explorer"),
    el(
      "p",
      { class: "explorer-intro" },
      "Change the query, the keys or the values, or switch on the causal mask; every step below is recomputed.",
    ),
    el("div", { class: "explorer-inputs" }, qBox, kvBox, el("div", { class: "button-row" }, addKey, removeKey), maskBox),
    status,
    steps,
  );
  for (const child of Array.from(widget.children)) child.hidden = true;
  widget.append(live);

  function drawInputs() {
    qBox.replaceChildren(el("legend", {}, "Query q"));
    const qRow = el("div", { class: "vector-row" });
    state.q.forEach((value, j) => qRow.append(numberInput(`${uid}-q${j}`, value, `q component ${j + 1}`)));
    qBox.append(qRow);

    const table = el("table", { class: "kv-table" });
    const head = el("tr", {}, el("th", { scope: "col" }, "position"));
    head.append(el("th", { scope: "col", colspan: state.K[0]?.length ?? 1 }, "key k"));
    head.append(el("th", { scope: "col", colspan: state.V[0]?.length ?? 1 }, "value v"));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    state.K.forEach((keyRow, i) => {
      const tr = el("tr", {}, el("th", { scope: "row" }, String(i)));
      keyRow.forEach((value, j) =>
        tr.append(el("td", {}, numberInput(`${uid}-k${i}-${j}`, value, `key ${i} component ${j + 1}`))),
      );
      state.V[i].forEach((value, j) =>
        tr.append(el("td", {}, numberInput(`${uid}-v${i}-${j}`, value, `value ${i} component ${j + 1}`))),
      );
      body.append(tr);
    });
    table.append(body);
    kvBox.replaceChildren(
      el("legend", {}, "Keys K and values V (one row per position)"),
      el("div", { class: "table-scroll" }, table),
    );

    positionSelect.replaceChildren(
      ...state.K.map((_, i) => el("option", { value: i, selected: i === state.causalIndex }, String(i))),
    );
    causalBox.checked = state.causal;
    positionSelect.disabled = !state.causal;
    // aria-disabled rather than disabled: a disabled button would drop the keyboard focus that just pressed it.
    addKey.setAttribute("aria-disabled", String(state.K.length >= MAX_KEYS));
    removeKey.setAttribute("aria-disabled", String(state.K.length <= 1));
  }

  function readNumber(input, what) {
    const text = input.value.trim();
    const value = Number(text);
    if (text === "" || !Number.isFinite(value)) {
      throw new Error(`${what} must be a number, but it is '${input.value}'.`);
    }
    return value;
  }

  function readInputs() {
    state.q = state.q.map((_, j) => readNumber(live.querySelector(`#${uid}-q${j}`), `q component ${j + 1}`));
    state.K = state.K.map((row, i) =>
      row.map((_, j) => readNumber(live.querySelector(`#${uid}-k${i}-${j}`), `key ${i} component ${j + 1}`)),
    );
    state.V = state.V.map((row, i) =>
      row.map((_, j) => readNumber(live.querySelector(`#${uid}-v${i}-${j}`), `value ${i} component ${j + 1}`)),
    );
    state.causal = causalBox.checked;
    state.causalIndex = Number(positionSelect.value);
  }

  function drawSteps(reply) {
    const table = el("table", { class: "steps-table" });
    // A note above the table rather than its <caption>: a caption would scroll sideways with a wide table.
    const note = el(
      "p",
      { class: "steps-note", id: `${uid}-steps-note` },
      `One query against ${reply.scores.length} ${reply.scores.length === 1 ? "key" : "keys"}; ` +
        `d_k = ${reply.d_k}, so scores are divided by √${reply.d_k}. ` +
        "The deeper a key's shade, the more weight it gets.",
    );
    table.setAttribute("aria-describedby", note.id);
    table.append(
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "key"),
          el("th", { scope: "col" }, "score q·k"),
          el("th", { scope: "col" }, "scaled"),
          el("th", { scope: "col" }, "masked"),
          el("th", { scope: "col" }, "softmax weight"),
        ),
      ),
    );
    const body = el("tbody");
    reply.weights.forEach((weight, i) => {
      const allowed = reply.allowed ? reply.allowed[i] : true;
      const cell = el("td", { class: "weight-cell", "data-weight": i }, bar(weight, "weight"), " ", formatNumber(weight));
      const heat = el("th", { scope: "row", class: "heat" }, String(i));
      heat.style.setProperty("--w", String(Number.isFinite(weight) ? weight : 0));
      body.append(
        el(
          "tr",
          { class: allowed ? "" : "is-masked", "data-key": i },
          heat,
          el("td", {}, formatNumber(reply.scores[i])),
          el("td", {}, formatNumber(reply.scaled[i])),
          el("td", { "data-masked": i }, allowed ? formatNumber(reply.masked[i]) : "−∞ (masked)"),
          cell,
        ),
      );
    });
    table.append(body);

    const largest = Math.max(1e-12, ...reply.output.map((v) => (Number.isFinite(v) ? Math.abs(v) : 0)));
    const outputList = el("ol", { class: "output-list", start: 0 });
    reply.output.forEach((value, j) => {
      outputList.append(
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
    });
    const outputText = `[${reply.output.map((v) => formatNumber(v)).join(", ")}]`;
    steps.replaceChildren(
      note,
      el("div", { class: "table-scroll" }, table),
      el("h3", { class: "output-title" }, "Output = weights · V"),
      el("p", { class: "explorer-output", "data-output-vector": "" }, outputText),
      outputList,
    );
    steps.hidden = false;
    status.textContent = `Weights [${reply.weights.map((v) => formatNumber(v)).join(", ")}], output ${outputText}.`;
    status.classList.remove("is-error");
    status.classList.add("visually-hidden");
  }

  function showProblem(message) {
    // The last result belongs to other inputs: take it off the screen rather than leave it looking current.
    steps.hidden = true;
    status.textContent = message;
    status.classList.add("is-error");
    status.classList.remove("visually-hidden");
  }

  let latest = 0;
  async function compute() {
    const request = ++latest;
    try {
      readInputs();
    } catch (error) {
      showProblem(`${error.message} The steps appear again once every box holds a number.`);
      return;
    }
    positionSelect.disabled = !state.causal;
    try {
      const reply = await postJson("/api/attention", {
        q: state.q,
        K: state.K,
        V: state.V,
        causal: state.causal,
        causal_index: state.causalIndex,
      });
      if (request === latest) drawSteps(reply);
    } catch (error) {
      if (request !== latest) return;
      showProblem(error instanceof ApiError ? error.message : "The attention step could not be computed.");
    }
  }
  const computeSoon = debounce(compute, 150);

  live.addEventListener("input", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.classList.contains("num")) computeSoon();
  });
  causalBox.addEventListener("change", compute);
  positionSelect.addEventListener("change", compute);
  addKey.addEventListener("click", () => {
    try {
      readInputs();
    } catch {
      // keep the last valid numbers
    }
    if (state.K.length >= MAX_KEYS) return;
    state.K.push(state.K[state.K.length - 1].map(() => 0));
    state.V.push(state.V[state.V.length - 1].map(() => 0));
    drawInputs();
    compute();
  });
  removeKey.addEventListener("click", () => {
    try {
      readInputs();
    } catch {
      // keep the last valid numbers
    }
    if (state.K.length <= 1) return;
    state.K.pop();
    state.V.pop();
    state.causalIndex = Math.min(state.causalIndex, state.K.length - 1);
    drawInputs();
    compute();
  });

  drawInputs();
  compute();
}
