// The players' pages' one way to call the JSON API: same origin, the session cookie, and the
// page's CSRF token on every call that changes something (api/play/session.py).
// window.sng.call(method, path, body?) -> {ok, status, body}
// window.sng.refusal(body) -> a readable sentence for a refusal {code, message, field?}
(function () {
  "use strict";
  function csrf() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }
  var sentences = null;
  function loadSentences() {
    if (sentences !== null) return sentences;
    sentences = {};
    var node = document.getElementById("refusal-sentences");
    if (node) {
      try { sentences = JSON.parse(node.textContent || "{}"); } catch (e) { sentences = {}; }
    }
    return sentences;
  }
  async function call(method, path, body) {
    var init = { method: method, credentials: "same-origin", headers: {} };
    if (method !== "GET" && method !== "HEAD") init.headers["X-CSRF-Token"] = csrf();
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    var response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      return { ok: false, status: 0, body: { code: "network", message: "The service could not be reached." } };
    }
    var parsed = null;
    var text = await response.text();
    if (text) {
      try { parsed = JSON.parse(text); } catch (e) { parsed = { message: text }; }
    }
    return { ok: response.ok, status: response.status, body: parsed };
  }
  function refusal(body) {
    if (!body) return "Something went wrong.";
    var known = loadSentences()[body.code];
    if (known) return known;
    return body.message || body.code || "Something went wrong.";
  }
  window.sng = { call: call, refusal: refusal, csrf: csrf };
})();
