// The attempt page: the code editor (or, for prose, a textarea with a live word count), drafts
// saved as you type, Run, Submit without leaving the page, and the result drawn in place the
// moment it exists. Without this file the page still works: a plain textarea, a form post, and
// a page that reloads itself while grading.
(function () {
  "use strict";

  var form = document.querySelector("form[data-attempt-form]");
  if (!form || !window.fetch) return;
  var textarea = form.querySelector("textarea[name=answer]");
  var keyInput = form.querySelector("input[name=idempotency_key]");
  var submitButton = form.querySelector("[data-submit]");
  var runButton = form.querySelector("[data-run]");
  var errorBox = document.querySelector("[data-action-error]");
  var draftStatus = form.querySelector("[data-draft-status]");
  var live = document.querySelector("[data-live]");
  var announcer = document.querySelector("[data-announce]");
  var csrf = form.querySelector("input[name=csrfmiddlewaretoken]").value;
  var picker = form.querySelector("[data-language-picker]");
  var editor = null;

  function pageData(id, fallback) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : fallback;
  }

  // --- times: drawn as the server's `when` filter draws them, "2 Dec 2026, 18:39 CET", in the
  // candidate's zone; whatever the browser's locale would say ("06:39 PM", "6:40 p.m.").
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  var zoneNames = JSON.parse(form.getAttribute("data-time-zone-names") || "{}");
  function timeFormat(zone) {
    return new Intl.DateTimeFormat("en-US", {
      timeZone: zone, year: "numeric", month: "numeric", day: "numeric",
      hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZoneName: "longOffset",
    });
  }
  var timeParts;
  try {
    timeParts = timeFormat(form.getAttribute("data-time-zone") || "UTC");
  } catch (e) {
    // A zone this browser does not know: UTC, as the server falls back to for a zone it does not know.
    zoneNames = { 0: "UTC" };
    timeParts = timeFormat("UTC");
  }

  function whenText(date) {
    var parts = {};
    timeParts.formatToParts(date).forEach(function (part) { parts[part.type] = part.value; });
    // "GMT+05:30" (or "GMT" at offset 0) -> 330: the key of the server's abbreviations.
    var offset = /GMT([+-])(\d{1,2})(?::(\d{2}))?/.exec(parts.timeZoneName || "");
    var minutes = offset ? (offset[1] === "-" ? -1 : 1) * (parseInt(offset[2], 10) * 60 + parseInt(offset[3] || "0", 10)) : 0;
    var name = zoneNames[String(minutes)] || parts.timeZoneName;
    return parts.day + " " + MONTHS[parseInt(parts.month, 10) - 1] + " " + parts.year + ", " + parts.hour + ":" + parts.minute + " " + name;
  }

  function whenElement(date) {
    var node = document.createElement("time");
    node.setAttribute("datetime", date.toISOString());
    node.textContent = whenText(date);
    return node;
  }

  // --- a written answer's length, counted as the grader counts it, against what is expected
  var meter = form.querySelector("[data-length-meter]");
  var countLine = meter && meter.querySelector("[data-word-count]");
  var wordPattern = meter && new RegExp(meter.getAttribute("data-word-pattern"), "g");

  function lengthWords(count) {
    var minScored = parseInt(meter.getAttribute("data-min-scored"), 10);
    var low = parseInt(meter.getAttribute("data-min-words"), 10);
    var high = parseInt(meter.getAttribute("data-max-words"), 10);
    if (count < minScored) return ["too-short", "too short to be scored"];
    if (count < low) return ["short", "shorter than expected"];
    if (count > high) return ["long", "longer than expected"];
    return ["ok", "within the expected length"];
  }

  function countWords() {
    if (!meter) return;
    var count = (textarea.value.match(wordPattern) || []).length;
    var minutes = count / parseInt(meter.getAttribute("data-words-per-minute"), 10);
    var state = lengthWords(count);
    countLine.textContent = count + (count === 1 ? " word" : " words") + ", about " +
      minutes.toFixed(1).replace(/\.0$/, "") + (minutes.toFixed(1) === "1.0" ? " minute" : " minutes") +
      " to say: " + state[1] + ".";
    countLine.setAttribute("data-length-state", state[0]);
    countLine.hidden = false;
  }

  // --- languages: each keeps its own text (its draft), and opens on its starter until it has one
  var starters = pageData("editor-starters", {});
  var texts = pageData("editor-texts", {});
  // "" on a page without a picker (a question answered in prose): its one text, sent without a language.
  var language = picker ? picker.value : "";

  function languageMode(id) {
    var option = picker && picker.querySelector("option[value='" + id + "']");
    return option ? option.getAttribute("data-mode") : form.getAttribute("data-editor-mode");
  }

  // --- the editor -------------------------------------------------------------------------
  function startEditor() {
    var holder = form.querySelector("[data-editor]");
    if (!window.ace || !holder) return;
    window.ace.config.set("basePath", form.getAttribute("data-ace-base"));
    // Its CSS comes from the <link>s in the page: an injected <style> would break the CSP.
    window.ace.config.set("useStrictCSP", true);
    holder.hidden = false;
    editor = window.ace.edit(holder, {
      mode: form.getAttribute("data-editor-mode"),
      value: textarea.value,
      tabSize: 4,
      useSoftTabs: true,
      wrap: false,
      showPrintMargin: false,
      useWorker: false,
      fontSize: "14px",
      // Tab indents inside; Esc leaves the text so Tab moves on, Enter comes back (no trap).
      enableKeyboardAccessibility: true,
      textInputAriaLabel: "Your answer",
    });
    editor.session.setUndoManager(new window.ace.UndoManager());
    editor.commands.addCommand({
      name: "submitAnswer",
      bindKey: { win: "Ctrl-Enter", mac: "Command-Enter" },
      exec: function () { submit(); },
    });
    editor.session.on("change", onEditorChange);
    textarea.hidden = true;
    textarea.setAttribute("aria-hidden", "true");
    textarea.tabIndex = -1;
    form.querySelector("[data-editor-help]").hidden = false;
  }

  function text() {
    return editor ? editor.getValue() : textarea.value;
  }

  // One editing session per language, so each keeps its own undo history and cursor.
  var sessions = {};

  function showLanguage(value) {
    if (editor) {
      var session = sessions[language];
      if (!session) {
        session = sessions[language] = window.ace.createEditSession(value);
        session.setUndoManager(new window.ace.UndoManager());
        session.setOptions({ tabSize: 4, useSoftTabs: true, useWorker: false });
        session.on("change", onEditorChange);
      }
      editor.setSession(session);
      session.setMode(languageMode(language));
      value = session.getValue();
    }
    textarea.value = value;
  }

  function switchLanguage() {
    var next = picker.value;
    if (next === language) return;
    texts[language] = text();
    if (editor) sessions[language] = editor.getSession();
    language = next;
    showLanguage(Object.prototype.hasOwnProperty.call(texts, next) ? texts[next] : starters[next] || "");
    texts[next] = text();
    showError("");
    // The language left is saved first, then this one, which becomes the attempt's language.
    window.clearTimeout(draftTimer);
    saveDraft();
  }

  function onEditorChange() {
    textarea.value = editor.getValue();
    changed();
  }

  textarea.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      submit();
    }
  });
  textarea.addEventListener("input", changed);
  textarea.addEventListener("input", countWords);

  // --- messages -----------------------------------------------------------------------------
  function showError(message) {
    errorBox.textContent = message;
    errorBox.hidden = !message;
  }

  function problemText(response, body) {
    if (body && body.detail) {
      var retry = response.headers.get("Retry-After");
      return body.detail + (response.status === 503 && retry ? " Your answer is kept: try again in " + retry + " seconds." : "");
    }
    return "Something went wrong (" + response.status + "). Your answer is kept: try again.";
  }

  function sendJson(method, url, data, headers) {
    var all = { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf };
    Object.keys(headers || {}).forEach(function (name) { all[name] = headers[name]; });
    return fetch(url, { method: method, credentials: "same-origin", headers: all, body: JSON.stringify(data) })
      .then(function (response) {
        return response.json().catch(function () { return null; }).then(function (body) {
          return { response: response, body: body };
        });
      });
  }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID().replace(/-/g, "");
    var bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return ("0" + b.toString(16)).slice(-2); }).join("");
  }

  function tooLarge() {
    var limit = parseInt(form.getAttribute("data-max-bytes"), 10);
    var size = new TextEncoder().encode(text()).length;
    if (size <= limit) return false;
    showError("Your answer is " + size + " bytes; the limit is " + limit + " bytes (64 KiB). Shorten it and try again.");
    return true;
  }

  // --- drafts: saved on the server as you type, so they follow you to another device ----------
  // What the server holds per language, and which language it takes the attempt to be in.
  var saved = {};
  var serverLanguage = language;
  var submitted = null;
  var draftTimer = null;
  var saving = false;
  Object.keys(texts).forEach(function (id) { saved[id] = texts[id]; });
  texts[language] = saved[language] = textarea.value;

  // The language whose text the server does not hold yet, or undefined. Languages left behind
  // go first, so the one in the editor is saved last and stays the attempt's language.
  function unsaved() {
    texts[language] = text();
    var others = Object.keys(texts).filter(function (id) { return id !== language && texts[id] !== saved[id]; });
    if (others.length) return others[0];
    return texts[language] !== saved[language] || serverLanguage !== language ? language : undefined;
  }

  // "saved" once every language's text is on the server and the attempt's language is this one;
  // "pending" or "saving" otherwise (read by the browser tests, and by anyone inspecting the page).
  function draftState(state) {
    draftStatus.setAttribute("data-draft-state", state);
  }

  function changed() {
    showError("");
    draftState("pending");
    window.clearTimeout(draftTimer);
    draftTimer = window.setTimeout(saveDraft, 800);
  }

  function setDraftStatus(message) {
    draftStatus.textContent = message;
  }

  function saveDraft() {
    if (saving) {
      draftState("pending");
      draftTimer = window.setTimeout(saveDraft, 400);
      return;
    }
    var which = unsaved();
    if (which === undefined) {
      draftState("saved");
      return;
    }
    var value = texts[which];
    var data = { answer: value };
    if (which) data.language = which;
    saving = true;
    draftState("saving");
    setDraftStatus("Saving draft…");
    sendJson("PUT", form.getAttribute("data-draft-url"), data)
      .then(function (result) {
        if (result.response.ok) {
          saved[which] = value;
          if (which) serverLanguage = which;
          setDraftStatus("Draft saved ");
          draftStatus.appendChild(whenElement(new Date(result.body.saved_at || Date.now())));
          if (unsaved() !== undefined) {
            draftState("pending");
            draftTimer = window.setTimeout(saveDraft, 0);
          } else {
            draftState("saved");
          }
        } else if (result.response.status === 413) {
          draftState("pending");
          setDraftStatus("Draft not saved: it is over 64 KiB.");
        } else {
          draftState("pending");
          setDraftStatus("Draft not saved yet; retrying.");
          draftTimer = window.setTimeout(saveDraft, 5000);
        }
      })
      .catch(function () {
        draftState("pending");
        setDraftStatus("Offline: draft not saved yet; retrying.");
        draftTimer = window.setTimeout(saveDraft, 5000);
      })
      .then(function () { saving = false; });
  }

  window.addEventListener("beforeunload", function (event) {
    var value = text();
    var pending = unsaved();
    if (pending !== undefined && (pending !== language || (value !== saved[language] && value !== submitted))) {
      event.preventDefault();
      event.returnValue = "";
    }
  });

  // --- submit --------------------------------------------------------------------------------
  var inFlight = false;

  function submit() {
    if (inFlight || tooLarge()) return;
    inFlight = true;
    submitButton.disabled = true;
    showError("");
    var value = text();
    var data = { answer: value };
    if (language) data.language = language;
    sendJson("POST", form.getAttribute("data-submit-url"), data, { "Idempotency-Key": keyInput.value })
      .then(function (result) {
        if (result.response.status === 202) {
          submitted = value;
          keyInput.value = newKey();
          say("Your answer was submitted and is being graded.");
          follow(result.body.version, true);
        } else {
          showError(problemText(result.response, result.body));
        }
      })
      .catch(function () {
        showError("The server could not be reached, so nothing was submitted. Your answer is kept: try again.");
      })
      .then(function () {
        inFlight = false;
        submitButton.disabled = false;
      });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    event.stopImmediatePropagation();
    submit();
  }, true);

  // --- the live panel: waits on the server for the next version, then redraws in place --------
  var following = 0;

  function say(message) {
    announcer.textContent = "";
    window.setTimeout(function () { announcer.textContent = message; }, 50);
  }

  function panelState() {
    var panel = live.querySelector(".live");
    return {
      version: parseInt(panel.getAttribute("data-version"), 10),
      pending: panel.hasAttribute("data-pending"),
      status: panel.getAttribute("data-status"),
    };
  }

  function follow(minVersion, fresh) {
    var ticket = ++following;
    var delay = 1000;
    function wait(min) {
      var state = panelState();
      // While queued, come back every few seconds to refresh the place in line.
      var seconds = state.status === "queued" ? 4 : 25;
      var url = form.getAttribute("data-live-url") + "?min_version=" + min + "&wait=" + seconds;
      fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) throw new Error("status " + response.status);
          return response.text();
        })
        .then(function (html) {
          if (ticket !== following) return;
          delay = 1000;
          var before = panelState();
          live.innerHTML = html;
          var after = panelState();
          if (after.version > before.version || fresh) arrived(before, after);
          fresh = false;
          if (after.pending) wait(after.version + 1);
        })
        .catch(function () {
          if (ticket !== following) return;
          delay = Math.min(delay * 2, 30000);
          window.setTimeout(function () { wait(min); }, delay);
        });
    }
    wait(minVersion);
  }

  function arrived(before, after) {
    if (after.pending) {
      if (after.status !== before.status) say(live.querySelector(".badge-status").textContent);
      return;
    }
    var heading = live.querySelector("#result-heading");
    var feedback = live.querySelector(".feedback");
    say((live.querySelector(".badge-status").textContent || "") + (feedback ? ": " + feedback.textContent : ""));
    // Focus goes to the result unless the candidate is typing in the editor.
    var active = document.activeElement;
    var typing = active && form.contains(active) && active !== submitButton && active !== runButton;
    if (heading && !typing) heading.focus();
  }

  // --- run --------------------------------------------------------------------------------
  var runPanel = document.querySelector("[data-run-panel]");
  var runBody = runPanel && runPanel.querySelector("[data-run-body]");
  var customBox = form.querySelector("[data-custom-input]");
  var running = false;

  function customInputs() {
    var field = customBox.querySelector("textarea");
    var lines = field.value.split("\n").filter(function (line) { return line.trim() !== ""; });
    if (!lines.length) return null;
    if (lines.length > 10) throw new Error("At most 10 test cases at a time (" + lines.length + " given).");
    return lines.map(function (line, index) {
      var value;
      try {
        value = JSON.parse(line);
      } catch (e) {
        throw new Error("Line " + (index + 1) + " is not JSON: write the arguments as a list, e.g. [[1, 2], 3].");
      }
      if (!Array.isArray(value)) throw new Error("Line " + (index + 1) + " must be a JSON list of the function's arguments.");
      return value;
    });
  }

  function drawRun(html) {
    runBody.innerHTML = html;
    var drawn = runBody.querySelector("[data-run-id]");
    if (drawn && drawn.hasAttribute("data-pending")) {
      followRun(drawn.getAttribute("data-run-id"));
      return;
    }
    finishRun();
    var summary = runBody.querySelector("[data-run-summary]") || runBody.querySelector(".load-error, .notice");
    var ranIn = runBody.querySelector("[data-ran-in]");
    say("Run finished. " + (ranIn ? ranIn.textContent + ". " : "") + (summary ? summary.textContent : ""));
    var active = document.activeElement;
    if (!active || active === runButton || active === document.body) runPanel.focus();
  }

  function followRun(runId) {
    // The page is drawn with run 1's panel URL; this run's has its id in that place.
    var url = form.getAttribute("data-run-panel-url").replace(/\d+\/panel\/$/, runId + "/panel/");
    var delay = 1000;
    function wait() {
      fetch(url + "?wait=10", { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) throw new Error("status " + response.status);
          return response.text();
        })
        .then(drawRun)
        .catch(function () {
          delay = Math.min(delay * 2, 15000);
          window.setTimeout(wait, delay);
        });
    }
    wait();
  }

  function finishRun() {
    running = false;
    runButton.disabled = false;
  }

  function run() {
    if (running || tooLarge()) return;
    var inputs;
    try {
      inputs = customInputs();
    } catch (e) {
      showError(e.message);
      return;
    }
    running = true;
    runButton.disabled = true;
    showError("");
    runPanel.hidden = false;
    runBody.innerHTML = '<p class="muted">Running your code…</p>';
    var data = { answer: text(), language: language };
    if (inputs) data.inputs = inputs;
    // The create answers with the run's panel, its cases drawn once they ran within the wait.
    var headers = { "Content-Type": "application/json", Accept: "text/html", "X-CSRFToken": csrf };
    fetch(form.getAttribute("data-run-url"), { method: "POST", credentials: "same-origin", headers: headers, body: JSON.stringify(data) })
      .then(function (response) {
        if (response.status === 200 || response.status === 202) return response.text().then(drawRun);
        return response.json().catch(function () { return null; }).then(function (body) {
          finishRun();
          runBody.innerHTML = "";
          runPanel.hidden = true;
          showError(problemText(response, body));
        });
      })
      .catch(function () {
        finishRun();
        runPanel.hidden = true;
        showError("The server could not be reached, so the code did not run. Try again.");
      });
  }

  if (runButton) {
    runButton.hidden = false;
    customBox.hidden = false;
    runButton.addEventListener("click", run);
    customBox.addEventListener("toggle", function () {
      runButton.textContent = customBox.open ? "Run" : "Run examples";
    });
  }

  startEditor();
  countWords();
  if (picker) picker.addEventListener("change", switchLanguage);
  var initial = panelState();
  if (initial.pending) follow(initial.version + 1, false);
})();
