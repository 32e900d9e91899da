// @ts-check
// LTI client-side postMessage storage: a login inside an LMS's iframe, where qkv's cookies are dropped.
// "put" (the login page): store the state in the platform's storage, then go on to the platform.
// "get" (the launch page): read it back, and post it to qkv from this page. Messages go to the platform's
// OIDC origin only, and only its replies are read. Without an answer, a sentence and a new-window link.
// A module: its names stay out of the page's global scope.
const WAIT_MS = 4000;

function platformFrame(data) {
  try {
    if (data.target === "_parent") {
      return window.parent !== window ? window.parent : null;
    }
    return window.parent.frames[data.target] || null;
  } catch (error) {
    return null;
  }
}

function fallback(info) {
  info.hidden = true;
  const help = document.getElementById("lti-storage-fallback");
  if (help) {
    help.hidden = false;
  }
}

// Wait for the platform's reply to message `id`: onReply gets it, giveUp runs on an error or no answer.
function awaitReply(origin, id, onReply, giveUp) {
  let done = false;
  const timer = window.setTimeout(function () {
    if (!done) {
      done = true;
      giveUp();
    }
  }, WAIT_MS);
  window.addEventListener("message", function listen(event) {
    const reply = event.data;
    if (done || event.origin !== origin || !reply || reply.message_id !== id) {
      return;
    }
    done = true;
    window.clearTimeout(timer);
    window.removeEventListener("message", listen);
    if (reply.error) {
      giveUp();
    } else {
      onReply(reply);
    }
  });
}

function ask(info, message, onReply) {
  const data = info.dataset;
  const frame = platformFrame(data);
  if (!frame) {
    fallback(info);
    return;
  }
  const id = "qkv-" + Math.random().toString(36).slice(2) + Date.now().toString(36);
  awaitReply(data.origin, id, onReply, () => fallback(info));
  frame.postMessage(Object.assign({ message_id: id }, message), data.origin);
}

function putState(info) {
  const data = info.dataset;
  ask(info, { subject: "lti.put_data", key: data.key, value: data.value }, function (reply) {
    if (reply.subject === "lti.put_data.response" && reply.value === data.value) {
      window.location.replace(data.next);
    } else {
      fallback(info);
    }
  });
}

function getState(info) {
  ask(info, { subject: "lti.get_data", key: info.dataset.key }, function (reply) {
    const form = /** @type {HTMLFormElement | null} */ (document.getElementById("lti-storage-launch"));
    if (reply.subject !== "lti.get_data.response" || typeof reply.value !== "string" || !form) {
      fallback(info);
      return;
    }
    /** @type {HTMLInputElement} */ (form.elements.namedItem("storage_value")).value = reply.value;
    form.submit();
  });
}

const storageInfo = document.getElementById("lti-storage");
if (storageInfo && storageInfo.dataset.mode === "put") {
  putState(storageInfo);
} else if (storageInfo && storageInfo.dataset.mode === "get") {
  getState(storageInfo);
}
