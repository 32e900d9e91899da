// @ts-check
// Entry point of the lesson page (loaded as a module; the page's CSP allows no inline scripts).
// It restores the learner's saved progress into the page and wires every exercise and widget.
import { ApiError, lessonApi, postJson } from "./js/api.js";
import "./js/due-dates.js"; // the lesson's due date in the learner's time zone
import { mountCodeExercise } from "./js/code.js";
import { mountAnswerForm } from "./js/exercises.js";
import { el } from "./js/format.js";
import { createProgressStore, readEmbeddedProgress, renderProgressIndicator } from "./js/progress.js";

const article = document.querySelector("article.lesson[data-lesson-id]");
const WIDGET_NAME = /^[a-z][a-z0-9-]*$/;
const widgetModules = new Map();

/**
 * Make one `[data-widget="NAME"]` element live: load `/widgets/NAME/widget.js` (the module in the widget's
 * folder, served from the same origin, once per name) and call its `mount(element, ctx)` (ctx.progress: the
 * learner's PROGRESS store). The widgets the server found in the chapters are the only list of widgets; a
 * widget whose module cannot be loaded keeps the static HTML the server rendered.
 */
async function mountWidget(element, ctx) {
  const name = element.getAttribute("data-widget") ?? "";
  if (!WIDGET_NAME.test(name)) return;
  if (!widgetModules.has(name)) widgetModules.set(name, import(`/widgets/${name}/widget.js`));
  try {
    const module = await widgetModules.get(name);
    module.mount(element, ctx);
  } catch (error) {
    console.error(`The widget "${name}" could not be started:`, error);
  }
}

function mountWithin(root, ctx) {
  for (const form of root.querySelectorAll("form.exercise[data-exercise-id]")) mountAnswerForm(form, ctx);
  for (const box of root.querySelectorAll(".code-exercise[data-exercise-id]")) mountCodeExercise(box, ctx);
  for (const widget of root.querySelectorAll("[data-widget]")) mountWidget(widget, ctx);
}

/** Parse section HTML from the server into an element (the whole <section>, or null). */
function parseSection(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return template.content.querySelector("section") ?? null;
}

/** The page's sections that change with the variant, in page order (the article names their ids). */
function variantSections() {
  const ids = (article.getAttribute("data-variant-sections") ?? "").split(/\s+/).filter(Boolean);
  return [...article.querySelectorAll("section.lesson-section[id]")].filter((section) => ids.includes(section.id));
}

/**
 * Add the "another variant" button to a section; it asks the server for new numbers and swaps every
 * section the server sends back.
 */
function mountVariantButton(section, ctx) {
  if (section.querySelector("button.new-variant")) return;
  const button = el("button", { type: "button", class: "new-variant secondary" }, "Another variant");
  const status = el("p", { class: "variant-status", "aria-live": "polite" });
  const bar = el(
    "div",
    { class: "variant-bar" },
    button,
    el("span", { class: "variant-note" }, `New numbers for ${variantSections().length > 1 ? "these parts" : "this part"}; your other answers stay.`),
    status,
  );
  const heading = section.querySelector("h2");
  if (heading) heading.insertAdjacentElement("afterend", bar);
  else section.prepend(bar);

  button.addEventListener("click", async () => {
    if (button.getAttribute("aria-disabled") === "true") return;
    button.setAttribute("aria-disabled", "true");
    status.textContent = "Fetching new numbers…";
    try {
      const reply = await postJson(`${ctx.api}/variant`, {});
      ctx.progress.set(reply.progress);
      let replaced = 0;
      for (const [id, html] of Object.entries(reply.sections ?? {})) {
        const old = document.getElementById(id);
        const fresh = typeof html === "string" ? parseSection(html) : null;
        if (!old || !fresh || fresh.id !== id) continue;
        old.replaceWith(fresh);
        mountWithin(fresh, ctx);
        replaced += 1;
      }
      if (replaced === 0) {
        status.textContent = "New variant saved; reload the page to see it.";
        return;
      }
      const first = variantSections()[0];
      if (!first) return;
      mountVariantButton(first, ctx);
      const freshStatus = first.querySelector(".variant-status");
      if (freshStatus) freshStatus.textContent = "New numbers loaded.";
      /** @type {HTMLButtonElement | null} */ (first.querySelector("button.new-variant"))?.focus();
    } catch (error) {
      status.textContent = error instanceof ApiError ? error.message : "A new variant could not be fetched.";
    } finally {
      button.removeAttribute("aria-disabled");
    }
  });
}

/** Keep focused and linked elements below the sticky progress bar, however tall it is (it wraps on phones). */
function padForStickyBar() {
  const bar = document.querySelector(".progress-panel");
  if (!bar) return;
  const pad = () => {
    // On a phone the bar scrolls away with the page (lesson.css): then no padding is needed.
    const sticky = getComputedStyle(bar).position === "sticky";
    document.documentElement.style.scrollPaddingTop = sticky ? `${Math.ceil(bar.getBoundingClientRect().height) + 16}px` : "0.5rem";
  };
  pad();
  if (typeof ResizeObserver === "function") new ResizeObserver(pad).observe(bar);
  window.addEventListener("resize", pad);
}

if (article) {
  padForStickyBar();
  const lessonId = article.getAttribute("data-lesson-id");
  const progress = createProgressStore(readEmbeddedProgress());
  const ctx = { api: lessonApi(lessonId), progress };
  progress.onChange((next) => renderProgressIndicator(next));
  renderProgressIndicator(progress.get());
  mountWithin(article, ctx);
  const first = variantSections()[0];
  if (first) mountVariantButton(first, ctx);
  document.documentElement.classList.add("js-ready");
}
