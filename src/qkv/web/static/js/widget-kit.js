// @ts-check
// What every widget module shares: reading the config the server wrote into the element, mounting once,
// ids that stay unique on the page, and SVG elements. A widget module (widgets/NAME/widget.js in its
// chapter's folder, served at /widgets/NAME/widget.js) imports these from /static/js/widget-kit.js.
import { debounce, el, formatCompact, formatNumber, formatVector } from "./format.js";

export { debounce, el, formatCompact, formatNumber, formatVector };

const SVG_NS = "http://www.w3.org/2000/svg";
const issued = new Map(); // prefix -> how many ids it has given out

/**
 * Create an SVG element with attributes and children; strings become text nodes, never markup.
 *
 * @param {string} tag  such as "rect" or "text"
 * @param {Record<string, string|number|boolean|null|undefined>} [attributes]  null and undefined are skipped
 * @param {...(Node|string|number|null|undefined)} children
 * @returns {SVGElement}
 */
export function svg(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * The JSON the server put in the element's `data-config`, or null when it is missing or not an object.
 *
 * @param {HTMLElement} element
 * @returns {object|null}
 */
export function readConfig(element) {
  try {
    const config = JSON.parse(element.dataset.config ?? "");
    return config !== null && typeof config === "object" && !Array.isArray(config) ? config : null;
  } catch {
    return null;
  }
}

/**
 * A prefix for the ids of one widget's elements, such as "mask2": unique on the page.
 *
 * @param {string} prefix
 * @returns {string}
 */
export function uniqueId(prefix) {
  const count = (issued.get(prefix) ?? 0) + 1;
  issued.set(prefix, count);
  return `${prefix}${count}`;
}

/**
 * Claim an element for a widget: its config and an id prefix, or null when it is already live, or when
 * its config is unreadable or `usable(config)` says no. Then the server's HTML stays, which is right.
 *
 * @param {HTMLElement} element  the `[data-widget]` element
 * @param {(config: object) => boolean} usable  whether the config holds what the widget draws
 * @returns {{config: object, uid: string}|null}
 */
export function claim(element, usable) {
  if (element.dataset.mounted) return null;
  const config = readConfig(element);
  if (config === null || !usable(config)) return null;
  element.dataset.mounted = "yes";
  return { config, uid: uniqueId(element.dataset.widget ?? "widget") };
}

/**
 * Replace the server's fallback by the live widget: the fallback stays in the element, hidden, so the
 * page keeps the same numbers for anyone who reads its source.
 *
 * @param {HTMLElement} element
 * @param {Element} live an HTML or SVG element
 */
export function showLive(element, live) {
  for (const child of Array.from(element.children)) /** @type {HTMLElement} */ (child).hidden = true;
  element.append(live);
}

/**
 * A checkbox with its label in a `.check-row`; `onChange(checked)` runs on every change.
 *
 * @param {string} id  the checkbox's id
 * @param {string} label
 * @param {(checked: boolean) => void} onChange
 * @param {boolean} [checked=false]
 * @returns {{row: HTMLElement, box: HTMLInputElement}}
 */
export function checkRow(id, label, onChange, checked = false) {
  const box = el("input", { type: "checkbox", id });
  box.checked = checked;
  box.addEventListener("change", () => onChange(box.checked));
  return { row: el("div", { class: "check-row" }, box, el("label", { for: id }, label)), box };
}
