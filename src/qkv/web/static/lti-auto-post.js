// @ts-check
// Posts the page's LTI form at once (a deep-linking response to the LMS); its button stays for a
// browser that runs no script. A file, not inline, so the page's Content-Security-Policy allows it.
"use strict";
(function () {
  const form = /** @type {HTMLFormElement | null} */ (document.getElementById("lti-auto-post"));
  if (form) {
    form.submit();
  }
})();
