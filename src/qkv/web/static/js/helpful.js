// @ts-check
// "Did this help?" under a message the grader or a hand-answer check gave: a yes/no and an optional line,
// sent once per learner and message (the server keeps the first). The instructor's page counts, per kind of
// message, how often learners marked it unhelpful.
import { ApiError, lessonApi, postJson } from "./api.js";
import { el } from "./format.js";

const MAX_LINE = 300;

/** The lesson's API root, read from the page's lesson, or null outside a lesson. */
function apiRoot() {
  const lesson = /** @type {HTMLElement | null} */ (document.querySelector("article.lesson[data-lesson-id]"));
  return lesson ? lessonApi(lesson.dataset.lessonId) : null;
}

/**
 * A "Did this help?" box for one message.
 *
 * @param {object} about  exercise_id, message (the text marked), kind, and for a test function and signature
 * @returns {HTMLElement|null}  null outside a lesson page (nothing to send to)
 */
export function helpfulBox(about) {
  const api = apiRoot();
  if (!api || !about.message) return null;
  // The line is asked for after "No" (it says what would have helped), and "No" is sent with it: sent at the
  // click, the line typed after it was lost (the server keeps the first mark).
  const line = el("input", { type: "text", class: "helpful-line", maxlength: String(MAX_LINE), "aria-label": "What would have helped? (optional)", placeholder: "What would have helped? (optional)", hidden: true });
  const said = el("span", { class: "helpful-said", role: "status" });
  const yes = el("button", { type: "button", class: "secondary helpful-yes" }, "Yes");
  const no = el("button", { type: "button", class: "secondary helpful-no", "aria-expanded": "false" }, "No");
  const sendNo = el("button", { type: "button", class: "secondary helpful-send", hidden: true }, "Send");
  const box = el("div", { class: "helpful" }, el("span", { class: "helpful-ask" }, "Did this help?"), " ", yes, " ", no, " ", line, " ", sendNo, " ", said);
  const buttons = [yes, no, sendNo];
  const send = async (helpful) => {
    for (const button of buttons) button.disabled = true;
    try {
      const reply = await postJson(`${api}/message-feedback`, { ...about, helpful, line: helpful ? "" : line.value.slice(0, MAX_LINE) });
      said.textContent = reply.saved ? "Thank you: noted." : "You had marked this message already.";
      line.disabled = true;
    } catch (error) {
      said.textContent = error instanceof ApiError ? error.message : "Your answer could not be sent.";
      for (const button of buttons) button.disabled = false;
    }
  };
  yes.addEventListener("click", () => send(true));
  no.addEventListener("click", () => {
    line.hidden = sendNo.hidden = false;
    no.setAttribute("aria-expanded", "true");
    said.textContent = "Say what would have helped, if you like, and press Send.";
    line.focus();
  });
  sendNo.addEventListener("click", () => send(false));
  line.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    event.preventDefault();
    if (!sendNo.disabled) send(false);
  });
  return box;
}
