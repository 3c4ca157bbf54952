// The tournament and room pages' actions: each is a <form class="act"> whose data-method and
// data-path name the JSON API call; its named inputs are the body (numbers for type=number,
// empty ones left out). Accepted: the page reloads with ?done=<what> and shows the new state;
// refused: the refusal's sentence (window.sng.refusal) in #refusal, and nothing changes.
(function () {
  "use strict";
  document.querySelectorAll("form.act").forEach(function (form) {
    form.addEventListener("submit", async function (event) {
      event.preventDefault();
      var out = document.getElementById("refusal");
      var button = form.querySelector("button[type=submit]");
      var body = {};
      var any = false;
      form.querySelectorAll("input[name], select[name]").forEach(function (input) {
        var value = input.value.trim();
        if (value === "") return;
        body[input.name] = (input.type === "number" || input.dataset.type === "number") ? Number(value) : value;
        any = true;
      });
      if (button) button.disabled = true;
      var r = await window.sng.call(form.dataset.method, form.dataset.path, any || form.dataset.body === "{}" ? body : undefined);
      if (button) button.disabled = false;
      if (r.ok) {
        var done = (r.body && r.body.pending) ? form.dataset.pending : form.dataset.done;
        window.location.replace(window.location.pathname + "?done=" + encodeURIComponent(done || "ok"));
        return;
      }
      var notice = document.getElementById("notice");
      if (notice) notice.hidden = true;  // the last success is not the news any more
      out.textContent = window.sng.refusal(r.body);
      out.dataset.code = (r.body && r.body.code) || "";
      out.hidden = false;
      out.focus();
    });
  });
  var faucet = document.getElementById("faucet");
  if (faucet) {
    faucet.addEventListener("click", async function () {
      var r = await window.sng.call("POST", "/me/faucet", { amount: Number(faucet.dataset.amount) });
      if (r.ok) {
        document.getElementById("balance").textContent = Number(r.body.balance).toLocaleString("en-US");
      } else {
        var out = document.getElementById("refusal");
        out.textContent = window.sng.refusal(r.body);
        out.hidden = false;
      }
    });
  }
})();
