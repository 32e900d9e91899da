// @ts-check
// The lesson list page: saves the optional display name through POST /api/learner.
import { ApiError, postJson } from "./js/api.js";
import "./js/due-dates.js"; // the lessons' due dates in the learner's time zone

const form = document.getElementById("learner-form");
if (form) {
  const input = /** @type {HTMLInputElement} */ (form.querySelector("#display-name"));
  const feedback = form.querySelector("#learner-feedback");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const reply = await postJson("/api/learner", { display_name: input.value });
      feedback.classList.remove("is-error");
      feedback.textContent = reply.display_name
        ? `Saved. You appear as “${reply.display_name}”.`
        : "Saved. You stay anonymous.";
    } catch (error) {
      feedback.classList.add("is-error");
      feedback.textContent = error instanceof ApiError ? error.message : "Your name could not be saved.";
    }
  });
}
