// LTI client-side postMessage storage: a login inside an LMS's iframe, where qkv's cookies are dropped.
// "put" (the login page): store the state in the platform's storage, then go on to the platform.
// "get" (the launch page): read it back, and post it to qkv from this page. Messages go to the platform's
// OIDC origin only, and only its replies are read. Without an answer, a sentence and a new-window link.
"use strict";
(function () {
  const info = document.getElementById("lti-storage");
  if (!info) {
    return;
  }
  const data = info.dataset;
  const WAIT_MS = 4000;

  function platformFrame() {
    try {
      if (data.target === "_parent") {
        return window.parent !== window ? window.parent : null;
      }
      return window.parent.frames[data.target] || null;
    } catch (error) {
      return null;
    }
  }

  function fallback() {
    info.hidden = true;
    const help = document.getElementById("lti-storage-fallback");
    if (help) {
      help.hidden = false;
    }
  }

  function ask(message, onReply) {
    const frame = platformFrame();
    if (!frame) {
      fallback();
      return;
    }
    const id = "qkv-" + Math.random().toString(36).slice(2) + Date.now().toString(36);
    let done = false;
    const timer = window.setTimeout(function () {
      if (!done) {
        done = true;
        fallback();
      }
    }, WAIT_MS);
    window.addEventListener("message", function listen(event) {
      const reply = event.data;
      if (done || event.origin !== data.origin || !reply || reply.message_id !== id) {
        return;
      }
      done = true;
      window.clearTimeout(timer);
      window.removeEventListener("message", listen);
      if (reply.error) {
        fallback();
        return;
      }
      onReply(reply);
    });
    frame.postMessage(Object.assign({ message_id: id }, message), data.origin);
  }

  if (data.mode === "put") {
    ask({ subject: "lti.put_data", key: data.key, value: data.value }, function (reply) {
      if (reply.subject === "lti.put_data.response" && reply.value === data.value) {
        window.location.replace(data.next);
      } else {
        fallback();
      }
    });
  } else if (data.mode === "get") {
    ask({ subject: "lti.get_data", key: data.key }, function (reply) {
      const form = document.getElementById("lti-storage-launch");
      if (reply.subject !== "lti.get_data.response" || typeof reply.value !== "string" || !form) {
        fallback();
        return;
      }
      form.elements.namedItem("storage_value").value = reply.value;
      form.submit();
    });
  }
})();
