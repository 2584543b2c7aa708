// The staff dashboard (templates/staff/dashboard.html): fetch its panels again every few
// seconds and put them in place, so the charts stay live without reloading the page.
(function () {
  "use strict";

  var panels = document.querySelector("[data-dashboard-panels]");
  if (!panels || !window.fetch) return;
  var url = panels.getAttribute("data-panels-url");
  var every = 1000 * (parseInt(panels.getAttribute("data-refresh-seconds"), 10) || 10);

  function refresh() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) {
        if (!response.ok) throw new Error("status " + response.status);
        return response.text();
      })
      .then(function (html) {
        panels.innerHTML = html;
        panels.removeAttribute("data-stale");
      })
      .catch(function () {
        // Keep the last panels and say they are old; the next turn tries again.
        panels.setAttribute("data-stale", "true");
      })
      .then(function () {
        window.setTimeout(refresh, every);
      });
  }

  window.setTimeout(refresh, every);
})();
