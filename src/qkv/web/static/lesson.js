// Entry point of the lesson page (loaded as a module; the page's CSP allows no inline scripts).
// It restores the learner's saved progress into the page and wires every exercise and widget.
import { ApiError, lessonApi, postJson } from "./js/api.js";
import { mountCodeExercise } from "./js/code.js";
import { mountAnswerForm } from "./js/exercises.js";
import { mountAttentionExplorer } from "./js/explorer.js";
import { el, formatCompact } from "./js/format.js";
import { createProgressStore, readEmbeddedProgress, renderProgressIndicator } from "./js/progress.js";
import { mountProjectionSliders } from "./js/sliders.js";

const article = document.querySelector("article.lesson[data-lesson-id]");

function mountWithin(root, ctx) {
  for (const form of root.querySelectorAll("form.exercise[data-exercise-id]")) mountAnswerForm(form, ctx);
  for (const box of root.querySelectorAll(".code-exercise[data-exercise-id]")) mountCodeExercise(box, ctx);
  for (const widget of root.querySelectorAll('[data-widget="projection-sliders"]')) mountProjectionSliders(widget);
  for (const widget of root.querySelectorAll('[data-widget="attention-explorer"]')) mountAttentionExplorer(widget);
}

/** Parse section HTML from the server into an element (the whole <section>, or null). */
function parseSection(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return template.content.querySelector("section") ?? null;
}

/** Add the "another variant" button to Part 1; it asks the server for new numbers and swaps the section. */
function mountVariantButton(section, ctx) {
  if (section.querySelector("button.new-variant")) return;
  const button = el("button", { type: "button", class: "new-variant secondary" }, "Another variant");
  const status = el("p", { class: "variant-status", "aria-live": "polite" });
  const bar = el(
    "div",
    { class: "variant-bar" },
    button,
    el("span", { class: "variant-note" }, "New numbers for Part 1; your other answers stay."),
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
      const html = reply.sections?.part1;
      const fresh = typeof html === "string" ? parseSection(html) : null;
      ctx.progress.set(reply.progress);
      if (fresh) {
        section.replaceWith(fresh);
        mountWithin(fresh, ctx);
        mountVariantButton(fresh, ctx);
        const freshButton = fresh.querySelector("button.new-variant");
        const freshStatus = fresh.querySelector(".variant-status");
        const x = reply.variant?.x;
        if (freshStatus) freshStatus.textContent = Array.isArray(x)
          ? `New variant: x = [${x.map((v) => formatCompact(v)).join(", ")}].`
          : "New variant loaded.";
        if (freshButton) freshButton.focus();
      } else {
        status.textContent = "New variant saved; reload the page to see it.";
      }
    } catch (error) {
      status.textContent = error instanceof ApiError ? error.message : "A new variant could not be fetched.";
    } finally {
      button.removeAttribute("aria-disabled");
    }
  });
}

if (article) {
  const lessonId = article.getAttribute("data-lesson-id");
  const progress = createProgressStore(readEmbeddedProgress());
  const ctx = { api: lessonApi(lessonId), progress };
  progress.onChange((next) => renderProgressIndicator(next));
  renderProgressIndicator(progress.get());
  mountWithin(article, ctx);
  const part1 = document.getElementById("part1");
  if (part1) mountVariantButton(part1, ctx);
  document.documentElement.classList.add("js-ready");
}
