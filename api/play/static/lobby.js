// The lobby: its lists refresh in place (live counts), the faucet, the leaderboard's tabs and
// the live activity feed (GET /activity, then EventSource('/activity/stream')).
(function () {
  "use strict";
  function text(tag, value, cls) {
    var node = document.createElement(tag);
    node.textContent = value;
    if (cls) node.className = cls;
    return node;
  }
  function chips(n) { return Number(n).toLocaleString("en-US"); }

  // Lists: the same server-rendered fragment, fetched again every few seconds.
  var lists = document.getElementById("lobby-lists");
  if (lists) {
    var every = Number(lists.getAttribute("data-refresh-ms")) || 10000;
    setInterval(async function () {
      if (document.hidden) return;
      try {
        var response = await fetch(lists.getAttribute("data-src"), { credentials: "same-origin" });
        if (!response.ok) return;
        var html = await response.text();
        // Keep the focused link focused across the swap (keyboard users).
        var focused = document.activeElement && lists.contains(document.activeElement)
          ? document.activeElement.getAttribute("href") : null;
        lists.innerHTML = html;
        var mine = await window.sng.call("GET", "/me/balance");
        if (mine.ok) document.getElementById("balance").textContent = chips(mine.body.balance);
        if (focused) {
          var again = lists.querySelector('a[href="' + focused + '"]');
          if (again) again.focus();
        }
      } catch (e) { /* the next round tries again */ }
    }, every);
  }

  // Faucet (dev): free chips, the balance shown changes.
  var faucet = document.getElementById("faucet");
  if (faucet) {
    faucet.addEventListener("click", async function () {
      var out = document.getElementById("balance-refusal");
      faucet.disabled = true;
      var r = await window.sng.call("POST", "/me/faucet", { amount: Number(faucet.dataset.amount) });
      faucet.disabled = false;
      if (r.ok) {
        out.hidden = true;
        document.getElementById("balance").textContent = chips(r.body.balance);
      } else {
        out.textContent = window.sng.refusal(r.body);
        out.hidden = false;
      }
    });
  }

  // Leaderboard.
  var board = document.getElementById("leaderboard");
  if (board) {
    var kind = "humans";
    var by = document.getElementById("board-by");
    async function load() {
      var r = await window.sng.call("GET", "/leaderboard?kind=" + kind + "&by=" + by.value + "&limit=20");
      var rows = document.getElementById("board-rows");
      rows.replaceChildren();
      var entries = r.ok ? r.body.entries : [];
      entries.forEach(function (e) {
        var tr = document.createElement("tr");
        tr.dataset.playerId = e.playerId;
        tr.append(text("td", e.rank), text("td", e.playerId + (e.isAgent ? " (agent)" : "")),
          text("td", chips(e.netChips)), text("td", e.tournamentsPlayed), text("td", e.tournamentsItm),
          text("td", e.handsPlayed), text("td", chips(e.biggestPot)));
        rows.append(tr);
      });
      document.getElementById("board-empty").hidden = entries.length > 0;
    }
    board.querySelectorAll("button.tab").forEach(function (tab) {
      tab.addEventListener("click", function () {
        kind = tab.dataset.kind;
        board.querySelectorAll("button.tab").forEach(function (t) {
          t.setAttribute("aria-pressed", t === tab ? "true" : "false");
        });
        load();
      });
    });
    by.addEventListener("change", load);
    load();
  }

  // Activity feed: the newest items first, then live.
  var feed = document.getElementById("feed");
  var KEEP = 30;
  // Each item as a sentence; the tournament or room it happened in is a link to its page.
  function place(d, capital) {
    var a = document.createElement("a");
    if (d.tournamentId) {
      a.href = "/play/tournaments/" + encodeURIComponent(d.tournamentId);
      a.textContent = "tournament " + String(d.tournamentId).slice(0, 8);
    } else {
      a.href = "/play/rooms/" + encodeURIComponent(d.roomId);
      a.textContent = "room " + String(d.roomId).replace(/^room_/, "").slice(0, 8);
    }
    if (capital) a.textContent = a.textContent[0].toUpperCase() + a.textContent.slice(1);
    return a;
  }
  function sentence(type, d) {
    switch (type) {
      case "tournament_started": return [place(d, true), " started."];
      case "player_eliminated": return [d.playerId + " finished " + d.rank + ordinal(d.rank) + " in ", place(d), "."];
      case "payout_settled": return [d.playerId + " was paid " + chips(d.amount) + " for " + d.position + ordinal(d.position) + " place in ", place(d), "."];
      case "big_pot": return ["A pot of " + chips(d.pot) + " (" + Math.floor(d.pot / d.bigBlind) + " big blinds) in hand " + d.handNumber + " of ", place(d), "."];
      default: return [type];
    }
  }
  function ordinal(n) {
    var s = ["th", "st", "nd", "rd"], v = n % 100;
    return s[(v - 20) % 10] || s[v] || s[0];
  }
  function add(item) {
    var li = document.createElement("li");
    li.append.apply(li, sentence(item.type, item.data || {}));
    li.dataset.type = item.type;
    feed.prepend(li);
    while (feed.children.length > KEEP) feed.lastElementChild.remove();
    document.getElementById("feed-empty").hidden = true;
  }
  async function start() {
    var after = 0, items = [];
    for (var round = 0; round < 4; round++) {
      var r = await window.sng.call("GET", "/activity?limit=500&after=" + after);
      if (!r.ok) break;
      items = items.concat(r.body.events);
      after = r.body.lastEventId;
      if (!r.body.more) break;
    }
    items.slice(-KEEP).forEach(add);
    document.getElementById("feed-empty").hidden = items.length > 0;
    var source = new EventSource("/activity/stream?after=" + after);
    ["tournament_started", "player_eliminated", "payout_settled", "big_pot"].forEach(function (type) {
      source.addEventListener(type, function (event) {
        try { add({ type: type, data: JSON.parse(event.data) }); } catch (e) { /* not JSON: skip */ }
      });
    });
  }
  if (feed) start();
})();
