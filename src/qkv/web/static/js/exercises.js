// @ts-check
// Answer forms (numeric, letter and multiple choice): Enter or the Check button sends the answer to the server,
// which alone decides whether it is right; the feedback appears in the form's aria-live paragraph.
import { ApiError, postJson } from "./api.js";
import { el } from "./format.js";
import { helpfulBox } from "./helpful.js";

const FEEDBACK_CLASSES = ["is-correct", "is-wrong", "is-format", "is-error"];

/** What a screen reader hears before the message, since the ✓ and ✗ marks are only pictures. */
function spokenVerdict(feedback, kind) {
  if (kind === "is-format") return "";
  const message = feedback.message ?? "";
  if (feedback.correct) return /^(correct|right)\b/i.test(message) ? "" : "Correct. ";
  return /^(incorrect|wrong)\b/i.test(message) ? "" : "Incorrect. ";
}

/** Mark the answer box (or the picked choice) invalid while its last answer is wrong, for assistive tech. */
function markInvalid(form, invalid) {
  for (const input of form.querySelectorAll('input[name="answer"]')) {
    const mark = invalid && (input.type !== "radio" || input.checked);
    if (mark) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
}

/** Show a Feedback ({correct, message, counted_as_attempt}) under its form. */
export function showFeedback(form, feedback) {
  const paragraph = form.querySelector(".feedback");
  if (!paragraph || !feedback) return;
  paragraph.classList.remove(...FEEDBACK_CLASSES);
  let kind = "is-wrong";
  if (feedback.correct) kind = "is-correct";
  else if (feedback.counted_as_attempt === false) kind = "is-format";
  paragraph.classList.add(kind);
  const mark = feedback.correct ? "✓" : kind === "is-format" ? "" : "✗";
  paragraph.replaceChildren();
  if (mark) paragraph.append(el("span", { class: "feedback-mark", "aria-hidden": "true" }, mark), " ");
  const verdict = spokenVerdict(feedback, kind);
  if (verdict) paragraph.append(el("span", { class: "visually-hidden" }, verdict));
  paragraph.append(feedback.message ?? "");
  markInvalid(form, !feedback.correct);
  form.dataset.status = feedback.correct ? "correct" : kind === "is-format" ? "format" : "attempted";
  askHelpful(form, feedback, kind);
}

/** "Did this help?" under a wrong answer's message (one box at a time, after the form's feedback). */
function askHelpful(form, feedback, kind) {
  form.querySelector(".helpful")?.remove();
  if (kind !== "is-wrong" || !feedback.message || !form.dataset.exerciseId) return;
  const box = helpfulBox({ exercise_id: form.dataset.exerciseId, message: feedback.message, kind: "answer" });
  if (box) form.querySelector(".feedback")?.after(box);
}

function showError(form, message) {
  const paragraph = form.querySelector(".feedback");
  if (!paragraph) return;
  paragraph.classList.remove(...FEEDBACK_CLASSES);
  paragraph.classList.add("is-error");
  paragraph.textContent = message;
}

function readAnswer(form) {
  if (form.dataset.kind === "choice") {
    const checked = form.querySelector('input[name="answer"]:checked');
    return checked ? checked.value : "";
  }
  const input = form.querySelector('[name="answer"]');
  return input ? input.value : "";
}

/** Put a saved answer back into the form (text box or radio button). */
export function restoreAnswer(form, entry) {
  if (!entry) return;
  if (entry.last_answer !== null && entry.last_answer !== undefined) {
    if (form.dataset.kind === "choice") {
      for (const radio of form.querySelectorAll('input[name="answer"]')) {
        radio.checked = radio.value === entry.last_answer;
      }
    } else {
      const input = form.querySelector('[name="answer"]');
      if (input) input.value = entry.last_answer;
    }
  }
  if (entry.feedback) showFeedback(form, entry.feedback);
}

/**
 * Wire one `form.exercise`.
 *
 * @param {HTMLFormElement} form
 * @param {{api: string, progress: ReturnType<import("./progress.js").createProgressStore>}} ctx
 */
export function mountAnswerForm(form, ctx) {
  const exerciseId = form.dataset.exerciseId;
  if (!exerciseId || form.dataset.mounted) return;
  form.dataset.mounted = "yes";
  form.noValidate = true;
  restoreAnswer(form, ctx.progress.get().exercises?.[exerciseId]);
  const button = form.querySelector('button[type="submit"]');
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (form.getAttribute("aria-busy") === "true") return;
    form.setAttribute("aria-busy", "true");
    if (button) button.setAttribute("aria-disabled", "true");
    try {
      const answer = readAnswer(form);
      const reply = await postJson(`${ctx.api}/answers`, { exercise_id: exerciseId, answer });
      showFeedback(form, reply.feedback);
      ctx.progress.set(reply.progress);
    } catch (error) {
      showError(form, error instanceof ApiError ? error.message : "Your answer could not be checked.");
    } finally {
      form.removeAttribute("aria-busy");
      if (button) button.removeAttribute("aria-disabled");
    }
  });
}
