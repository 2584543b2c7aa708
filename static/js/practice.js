// Practice aids: the mock interview's countdown, hints and notes without leaving the page, and
// the browser's time zone on the settings page. Every form here works without this file; the
// deadline itself is the server's, which refuses a late submit whatever this clock says.
(function () {
  "use strict";

  function csrfOf(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function send(form, method, data) {
    return fetch(form.getAttribute("data-api-url"), {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfOf(form) },
      body: JSON.stringify(data),
    }).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (body) {
        if (!response.ok) {
          throw new Error(body && body.detail ? body.detail : "Something went wrong (" + response.status + ").");
        }
        return body;
      });
    });
  }

  // --- the countdown: from the server's seconds left when the page has them (no clock skew),
  // else from the deadline by this machine's clock.
  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function words(seconds) {
    var hours = Math.floor(seconds / 3600);
    var minutes = Math.floor((seconds % 3600) / 60);
    var rest = seconds % 60;
    return (hours ? hours + ":" + pad(minutes) : minutes) + ":" + pad(rest) + " left";
  }

  document.querySelectorAll("[data-timer]").forEach(function (timer) {
    var text = timer.querySelector("[data-timer-text]");
    var given = timer.getAttribute("data-seconds-left");
    var endsAt = given !== null && given !== ""
      ? Date.now() + Number(given) * 1000
      : Date.parse(timer.getAttribute("data-deadline"));
    if (!text || isNaN(endsAt)) return;
    text.setAttribute("role", "timer");
    var handle = null;

    function tick() {
      var left = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
      if (left > 0) {
        text.textContent = words(left);
        return;
      }
      window.clearInterval(handle);
      timer.setAttribute("data-time-up", "");
      text.textContent = "Time is up: answers are no longer accepted";
      text.setAttribute("role", "alert");
      // The session's page shows its summary once the server agrees that time is up.
      if (timer.hasAttribute("data-reload-at-end")) window.setTimeout(function () { window.location.reload(); }, 1500);
    }

    tick();
    handle = window.setInterval(tick, 1000);
  });

  // --- hints, in order, one per click (the count asked for makes a double click one hint)
  document.querySelectorAll("form[data-hint-form]").forEach(function (form) {
    var holder = form.closest("[data-hints]");
    var list = holder.querySelector("[data-hint-list]");
    var used = holder.querySelector("[data-hints-used]");
    var button = form.querySelector("[data-hint-button]");
    var count = form.querySelector("input[name=count]");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      button.disabled = true;
      send(form, "POST", { count: Number(count.value) }).then(function (body) {
        list.textContent = "";
        body.hints.forEach(function (hint) {
          var item = document.createElement("li");
          item.textContent = hint;
          list.appendChild(item);
        });
        var n = body.hints_revealed;
        used.textContent = "(" + n + " of " + body.hints_total + " shown; " + n + " hint" + (n === 1 ? "" : "s") + " used)";
        if (n >= body.hints_total) {
          form.remove();
          return;
        }
        count.value = String(n + 1);
        button.textContent = "Show a hint (" + (n + 1) + " of " + body.hints_total + ")";
        button.disabled = false;
      }).catch(function (error) {
        used.textContent = error.message;
        button.disabled = false;
      });
    });
  });

  // --- the private note, saved in place
  document.querySelectorAll("form[data-note-form]").forEach(function (form) {
    var status = form.querySelector("[data-note-status]");
    var textarea = form.querySelector("textarea[name=text]");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      status.textContent = "Saving…";
      send(form, "PUT", { text: textarea.value }).then(function () {
        status.textContent = "Note saved";
      }).catch(function (error) {
        status.textContent = error.message;
      });
    });
  });

  // --- settings: a zone never chosen starts on the browser's own
  var settings = document.querySelector("form[data-settings-form][data-zone-unset]");
  if (settings && window.Intl) {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    var select = settings.querySelector("select[name=time_zone]");
    if (zone && select && select.querySelector("option[value='" + zone.replace(/'/g, "") + "']")) select.value = zone;
  }
})();
