// @ts-check
// Number formatting shared by the widgets: fixed 6 decimals for the explorer, compact for the slider table.

/**
 * @param {number|string|null} value  a number, or a string such as "nan"/"inf" that the server uses for
 *   non-finite floats, or null for a masked (minus infinity) entry
 * @param {number} [digits=6]
 * @returns {string}
 */
export function formatNumber(value, digits = 6) {
  if (value === null || value === undefined) return "−∞";
  if (typeof value === "string") return value;
  if (!Number.isFinite(value)) return String(value);
  // Always the same number of decimals, so 2 and 2.0000001 are told apart and columns line up.
  const text = value.toFixed(digits);
  return /^-0\.0+$/.test(text) ? text.slice(1) : text;
}

/**
 * "[3, 2]" style, as the lesson writes vectors.
 *
 * @param {Array<number|string|null>} values
 * @param {number} [digits=6]
 * @returns {string}
 */
export function formatVector(values, digits = 6) {
  return `[${values.map((v) => formatNumber(v, digits)).join(", ")}]`;
}

/**
 * Shorter form for slider-driven tables: up to `digits` decimals, trailing zeros dropped.
 *
 * @param {number|string|null} value
 * @param {number} [digits=4]
 * @returns {string}
 */
export function formatCompact(value, digits = 4) {
  if (typeof value !== "number" || !Number.isFinite(value)) return formatNumber(value);
  const text = value.toFixed(digits).replace(/\.?0+$/, "");
  return text === "-0" ? "0" : text;
}

/**
 * A value `el` puts into an element: a node as it is, anything else (but null, undefined and false, which are
 * left out) as text.
 *
 * @typedef {Node | string | number | boolean | null | undefined} Child
 */

/**
 * Create an element with attributes and children (strings become text nodes, never HTML).
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attributes]  `class`, `text`, or an attribute (true: present; false,
 *   null or undefined: absent)
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "class") node.className = String(value);
    else if (name === "text") node.textContent = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * Wait `ms` after the last call before running `fn` (used for sliders and explorer edits).
 *
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @param {number} ms
 * @returns {(...args: A) => void}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  return (/** @type {A} */ ...args) => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn(...args);
    }, ms);
  };
}
