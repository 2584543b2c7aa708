// InterviewPrep pages: small progressive enhancements. Every form works without this file.
(function () {
  "use strict";

  // A second click while the first request is on its way is harmless (the hidden idempotency
  // key makes it one submission), but disabling the button tells the user it was taken.
  document.querySelectorAll("form[data-submit-once]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (event.defaultPrevented) return;
      form.querySelectorAll("button[type=submit]").forEach(function (button) {
        button.disabled = true;
      });
    });
  });
  // Coming back with the Back button restores the page from cache with the button disabled.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-submit-once] button[type=submit]").forEach(function (button) {
      button.disabled = false;
    });
  });

  // Refuse an over-long answer before sending it: the server would refuse it too, and a body
  // far over the limit is dropped unread, so the text could not be shown back.
  document.querySelectorAll("form[data-max-bytes]").forEach(function (form) {
    var limit = parseInt(form.getAttribute("data-max-bytes"), 10);
    var textarea = form.querySelector("textarea");
    var message = form.querySelector("[data-size-error]");
    if (!limit || !textarea || !message || !window.TextEncoder) return;
    var encoder = new TextEncoder();
    form.addEventListener("submit", function (event) {
      var size = encoder.encode(textarea.value).length;
      if (size > limit) {
        event.preventDefault();
        message.textContent = "Your answer is " + size + " bytes; the limit is " + limit +
          " bytes (64 KiB). Shorten it and submit again.";
        message.hidden = false;
        textarea.focus();
      } else {
        message.hidden = true;
      }
    }, true);
  });

  // While an answer is being evaluated, ask the API for a newer version of the attempt and
  // redraw the page when it comes. If the user has started editing the answer, only say that
  // the result is ready: reloading would throw their edits away.
  var panel = document.querySelector("[data-poll-url]");
  if (!panel || !window.fetch) return;
  var version = parseInt(panel.getAttribute("data-version"), 10);
  var pageUrl = panel.getAttribute("data-page-url");
  var pollUrl = panel.getAttribute("data-poll-url");
  var interval = (parseFloat(panel.getAttribute("data-interval")) || 2) * 1000;
  var textarea = document.querySelector("form[data-max-bytes] textarea");
  var original = textarea ? textarea.value : "";
  var delay = interval;
  var pending = ["queued", "processing"];

  function announce(newVersion) {
    var note = panel.querySelector(".status-update");
    var link = document.createElement("a");
    link.href = pageUrl + "?v=" + newVersion;
    link.textContent = "Show the result";
    note.textContent = "The evaluation has finished. Your edits are kept until you choose: ";
    note.appendChild(link);
    note.hidden = false;
  }

  function poll() {
    fetch(pollUrl + "?min_version=" + version, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.json();
      })
      .then(function (attempt) {
        delay = interval;
        if (attempt.version > version && pending.indexOf(attempt.status) === -1) {
          if (textarea && textarea.value !== original) {
            announce(attempt.version);
            return;
          }
          window.location.replace(pageUrl + "?v=" + attempt.version);
          return;
        }
        window.setTimeout(poll, delay);
      })
      .catch(function () {
        // Back off while the server is unreachable, up to half a minute between tries.
        delay = Math.min(delay * 2, 30000);
        window.setTimeout(poll, delay);
      });
  }
  window.setTimeout(poll, interval);
})();
