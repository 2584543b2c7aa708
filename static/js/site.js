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

})();
