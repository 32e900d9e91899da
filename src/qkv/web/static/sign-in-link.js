// @ts-check
// Sign-in pages: a link carries its one-time token in the URL's fragment (#token=…), which the browser
// never sends, so no request line or access log holds it. This script takes it out of the address bar
// (and so out of the history) and puts it in the page's form, whose POST carries it in the body.
// data-fragment-token="submit": post it at once (the learner's page then names the account);
// "show": reveal the form and its button (the instructor's page).

const form = /** @type {HTMLFormElement | null} */ (document.querySelector("form[data-fragment-token]"));

function takeToken() {
  const token = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (window.location.hash) {
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  if (!token) return;
  /** @type {HTMLInputElement} */ (form.elements.namedItem("token")).value = token;
  form.hidden = false;
  const absent = document.getElementById("no-link");
  if (absent) absent.hidden = true;
  if (form.dataset.fragmentToken === "submit") form.submit();
}

if (form) {
  takeToken();
  // A link opened on this very page changes only the fragment: the page is not loaded again.
  window.addEventListener("hashchange", takeToken);
}
