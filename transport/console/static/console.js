// Herald console: small improvements over pages that work without it.
// Copy buttons, the bind page's live status, a job page that follows its
// job's state. Nothing here is needed to use a form.
"use strict";
(function () {
  document.documentElement.classList.add("js");

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("[data-copy]");
    if (!btn) return;
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      var was = btn.textContent;
      btn.textContent = btn.getAttribute("data-copied") || was;
      setTimeout(function () { btn.textContent = was; }, 2000);
    });
  });

  function poll(url, every, done) {
    var stop = false;
    function tick() {
      if (stop) return;
      fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (data && done(data)) { stop = true; return; }
          setTimeout(tick, every);
        })
        .catch(function () { setTimeout(tick, every * 2); });
    }
    setTimeout(tick, every);
  }

  var bind = document.querySelector("[data-poll]");
  if (bind) {
    poll(bind.getAttribute("data-poll"), 1000, function (data) {
      if (!data.bound) return false;
      bind.textContent = data.text;
      bind.classList.add("ok");
      bind.setAttribute("data-bound", "true");
      return true;
    });
  }

  var job = document.querySelector("[data-watch]");
  if (job) {
    var state = job.getAttribute("data-state");
    poll(job.getAttribute("data-watch"), 1000, function (data) {
      if (data.state === state) return false;
      window.location.reload();
      return true;
    });
  }
})();
