// @ts-check
// LTI Dynamic Registration's last step: tell the LMS page that opened (or framed) this one that qkv is
// registered, so it closes its dialog. Sent at once and again from the Close button.
"use strict";
(function () {
  const target = window.opener || (window.parent !== window ? window.parent : null);
  function close() {
    if (target) {
      target.postMessage({ subject: "org.imsglobal.lti.close" }, "*");
    } else {
      window.close();
    }
  }
  const button = document.getElementById("lti-close");
  if (button) {
    button.addEventListener("click", close);
  }
  close();
})();
