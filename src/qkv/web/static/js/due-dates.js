// @ts-check
// A lesson's due dates in the learner's own time zone, and the time left ("due in 2 days").
// The server writes each time as <time datetime="...Z"> in UTC (shown as it is without JavaScript).

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function plural(count, word) {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

// "due in 2 days", "due in 5 hours", "due in 12 minutes", or that the time has passed.
export function timeLeft(until, now) {
  const left = until - now;
  if (left <= 0) {
    return "(the due date has passed: reload the page)";
  }
  if (left >= DAY) {
    return `(due in ${plural(Math.floor(left / DAY), "day")})`;
  }
  if (left >= HOUR) {
    return `(due in ${plural(Math.floor(left / HOUR), "hour")})`;
  }
  return `(due in ${plural(Math.max(1, Math.floor(left / MINUTE)), "minute")})`;
}

function showDueDates() {
  const format = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  for (const time of document.querySelectorAll("time.due-time")) {
    const moment = Date.parse(time.getAttribute("datetime"));
    if (!Number.isNaN(moment)) {
      time.textContent = format.format(new Date(moment));
    }
  }
  for (const left of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".due-left"))) {
    const until = Date.parse(left.dataset.until);
    if (!Number.isNaN(until)) {
      left.textContent = timeLeft(until, Date.now());
    }
  }
}

showDueDates();
