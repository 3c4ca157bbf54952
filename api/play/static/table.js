// The table page (api/play/table.py): everything live arrives over a stream, never a timer.
// A seated person: their own WebSocket (/tournaments/{id}/me/ws or /rooms/{id}/me/ws, the
// session cookie), which carries game_state, action_required, the public events and advice,
// and on which they act ({"type":"act", handNumber, turn, action, amount?, requestId}).
// An observer: the public stream (a tournament's /events SSE, a room's /stream WebSocket),
// and the public game state read again after each of its events. docs/play.md "The table".
(function () {
  "use strict";
  var root = document.getElementById("table");
  if (!root) return;
  var cfg = root.dataset;
  var isRoom = cfg.kind === "room";
  var player = cfg.mode === "player";
  var $ = function (id) { return document.getElementById(id); };

  var game = null;        // the newest game_state
  var required = null;    // the newest action_required
  var lastId = "";        // the stream's last message id (resume with ?after=)
  var early = [];         // hand results that came before the first game state
  var socket = null;
  var ended = false;
  var backoff = 1000;
  var pending = null;     // the requestId of an act in flight
  var requests = 0;
  var advice = null;
  var resultTimer = null;
  var SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };
  var EVENT_TYPES = [
    "tournament_state_changed", "blind_level_changed", "player_eliminated", "hand_result",
    "tournament_ended", "tournament_payout_settled",
    // A multi-table tournament's own (docs/events.md).
    "player_moved", "table_broken", "hand_for_hand", "final_table", "late_registration_closed"
  ];
  var REASONS = { balance: "to balance the tables", "break": "because your table broke", "final": "for the final table" };
  var tableNumber = null;  // the MTT table the last game state placed you at
  var movedShown = null;   // the move the notice shows (from the event, or a changed table)

  // ---- small helpers -----------------------------------------------------------------------
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function chips(n) { return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US"); }
  function seconds(ms) { return Math.max(0, Math.ceil((ms - Date.now()) / 1000)); }
  function clock(ms) {
    var s = seconds(ms);
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function card(code) {
    var node = el("span", "card");
    if (!code || code.length < 2) { node.classList.add("back"); node.textContent = "🂠"; return node; }
    var rank = code.slice(0, -1).replace("T", "10");
    var suit = code.slice(-1).toLowerCase();
    node.classList.add("suit-" + suit);
    node.textContent = rank + (SUITS[suit] || suit);
    node.setAttribute("data-card", code);
    return node;
  }
  var seen = {};  // seat (0-based) -> player, from a room's hand_start and player_join events
  // Who sat where in the hands seen running ("<table>:<hand>" -> seat -> player): a hand's
  // result names its winners by seat, and in a multi-table tournament the state after that
  // hand may already have moved them away (a move is made at the same boundary).
  var dealt = {};
  var dealtKeys = [];
  function noteDealt(state) {
    if (!state.hand || !state.tableId) return;
    var key = state.tableId + ":" + state.handNumber;
    if (!dealt[key]) { dealt[key] = {}; dealtKeys.push(key); }
    (state.seats || []).forEach(function (s) { dealt[key][s.seat] = s.playerId; });
    while (dealtKeys.length > 8) delete dealt[dealtKeys.shift()];
  }
  function playerAt(seat) {
    var seats = (game && game.seats) || [];
    for (var i = 0; i < seats.length; i++) {
      if (seats[i].seat === seat) return seats[i].playerId;
    }
    return seen[seat] || "seat " + (seat + 1);
  }
  function setConn(text) {
    var node = $("conn");
    node.textContent = text;
    node.hidden = !text;
  }
  function log(text) {
    var list = $("log");
    var item = el("li", "", text);
    list.insertBefore(item, list.firstChild);
    while (list.children.length > 12) list.removeChild(list.lastChild);
  }
  function showRefusal(text) {
    var box = $("refusal");
    if (!box) return;
    box.textContent = text || "";
    box.hidden = !text;
  }

  // ---- rendering the game state ------------------------------------------------------------
  function render() {
    if (!game) return;
    var hand = game.hand;
    var you = game.you;
    var players = {};
    if (hand && hand.players) hand.players.forEach(function (p) { players[p.seat] = p; });

    // Level, blinds, the next level.
    var level = $("level");
    level.textContent = "";
    var t = game.tournament;
    if (t) {
      level.appendChild(el("span", "", "Level " + (t.currentLevel + 1)));  // the wire counts from 0
      level.appendChild(el("span", "", "Blinds " + chips(t.smallBlind) + "/" + chips(t.bigBlind) +
        (t.ante ? " ante " + chips(t.ante) : "")));
      if (t.levelEndsAt && t.state === "playing") level.appendChild(el("span", "next-level", "Next level in " + clock(t.levelEndsAt)));
    } else if (game.stakes) {
      level.appendChild(el("span", "", "Blinds " + chips(game.stakes.smallBlind) + "/" + chips(game.stakes.bigBlind)));
    }
    if (game.handNumber) level.appendChild(el("span", "", "Hand " + game.handNumber));

    // Board and pots: the running hand's, else the last hand's.
    var board = $("board");
    board.textContent = "";
    var cards = hand ? hand.board : (game.lastHand ? game.lastHand.board : []);
    (cards || []).forEach(function (c) { board.appendChild(card(c)); });
    var pots = $("pots");
    pots.textContent = "";
    if (hand && !hand.over) {
      pots.appendChild(el("span", "pot", "Pot " + chips(hand.pot)));
      (hand.pots || []).forEach(function (p, i) {
        if (hand.pots.length > 1) pots.appendChild(el("span", "side", (i ? "Side pot " + i : "Main pot") + " " + chips(p.amount)));
      });
    }

    // Seats.
    var list = $("seats");
    list.textContent = "";
    var shown = (!hand && game.lastHand && game.lastHand.shown) || {};
    (game.seats || []).forEach(function (s) {
      var p = players[s.seat];
      var item = el("li", "seat");
      item.setAttribute("data-seat", String(s.seat));
      if (you && you.seat === s.seat) item.classList.add("mine");
      if (hand && hand.actor === s.seat && !hand.over) item.classList.add("acting");
      var top = el("div", "seat-top");
      top.appendChild(el("span", "name", s.playerId));
      if (hand && hand.button === s.seat) top.appendChild(el("span", "badge button", "D"));
      item.appendChild(top);
      item.appendChild(el("span", "stack", chips(p ? p.stack : s.stack)));
      var status = [];
      if (p && p.folded) status.push("folded");
      if (p && p.allIn) status.push("all-in");
      if (s.sittingOut) status.push("sitting out");
      if (s.pending) status.push("joining");
      if (s.leaving) status.push("leaving");
      if (s.graceUntil) status.push("disconnected, held " + seconds(s.graceUntil) + " s");
      if (p && p.bet) item.appendChild(el("span", "bet", "bet " + chips(p.bet)));
      if (status.length) item.appendChild(el("span", "status", status.join(", ")));
      var holeCards = (p && p.holeCards) || (shown[String(s.seat)] && shown[String(s.seat)].cards);
      if (holeCards && !(you && you.seat === s.seat)) {
        var hole = el("span", "seat-cards");
        holeCards.forEach(function (c) { hole.appendChild(card(c)); });
        item.appendChild(hole);
      }
      list.appendChild(item);
    });

    // Whose turn, with the countdown to the deadline.
    // The sentence is announced (aria-live) when it changes; the countdown beside it is not.
    var turn = $("turn");
    var countdown = $("countdown");
    var text;
    var mine = false;
    if (hand && !hand.over && hand.actor !== null && hand.actor !== undefined) {
      mine = !!(you && you.toAct);
      text = mine ? "Your turn" : playerAt(hand.actor) + " to act";
      countdown.textContent = game.deadline ? seconds(game.deadline) + " s left" : "";
    } else {
      text = game.seats && game.seats.length ? "Waiting for the next hand" : "Waiting for players";
      countdown.textContent = "";
    }
    if (turn.textContent !== text) turn.textContent = text;
    turn.parentNode.classList.toggle("mine", mine);

    renderMtt();
    if (player) renderMine();
    if (t && (t.state === "ended" || t.state === "closed" || t.state === "settling")) over();
  }

  function renderMine() {
    var you = game.you;
    var hand = game.hand;
    var hole = $("hole");
    hole.textContent = "";
    var mine = null;
    if (you && hand && hand.players) {
      hand.players.forEach(function (p) { if (p.seat === you.seat) mine = p; });
    }
    if (mine && mine.holeCards) mine.holeCards.forEach(function (c) { hole.appendChild(card(c)); });
    else hole.appendChild(el("span", "muted small", "No cards"));
    var stack = $("my-stack");
    if (you) {
      var status = { playing: "", sitting_out: " · sitting out", joining: " · joining next hand",
        leaving: " · leaving", eliminated: " · eliminated", won: " · winner",
        in_transit: " · moving to another table" }[you.status] || "";
      stack.textContent = "Stack " + chips(mine ? mine.stack : you.stack) + status + (you.place ? " · place " + you.place : "");
    } else {
      stack.textContent = "Not seated";
    }
    // The disconnect grace: while the table holds your decision.
    var grace = $("grace");
    var seat = null;
    (game.seats || []).forEach(function (s) { if (you && s.seat === you.seat) seat = s; });
    if (seat && seat.graceUntil) {
      grace.hidden = false;
      grace.textContent = "Your seat is held until " + new Date(seat.graceUntil).toLocaleTimeString() +
        " (" + seconds(seat.graceUntil) + " s)";
    } else {
      grace.hidden = true;
    }
    // The tournament's view of you.
    var mv = game.tournamentMyView;
    $("my-view").hidden = !mv;
    // A multi-table field shows the place among every table's players below (mtt-view).
    $("mv-rank").parentNode.hidden = !!game.mtt;
    if (mv) {
      $("mv-rank").textContent = String(mv.rank);
      $("mv-m").textContent = mv.mRatio.toFixed(2);
      $("mv-bb").textContent = mv.stackInBigBlinds.toFixed(2);
      var icm = $("mv-icm");
      icm.textContent = chips(Math.round(mv.icmEquity));
      // A large field's figure is the chip equity of the prizes at stake, not exact ICM.
      if (game.mtt && game.mtt.icmExact === false) {
        var est = el("span", "est", " (est.)");
        est.title = "An estimate: the field is too large for exact ICM, so this is your chip equity of the prizes at stake.";
        icm.appendChild(est);
      }
      $("mv-jump").textContent = chips(mv.payJumpToNext);
    }
    $("sit-in").hidden = !(you && you.status === "sitting_out");
    // Out of the game (or never dealt in): no controls to look at.
    var out = !you || you.status === "eliminated" || you.status === "won";
    $("actions").hidden = out;
    $("amount-box").hidden = out;
    $("to-call").hidden = out;
    renderActions();
  }

  // A multi-table tournament's numbers (game.mtt), hand-for-hand, and a move to another table.
  function renderMtt() {
    var m = game.mtt;
    var h4h = $("hand-for-hand");
    if (h4h) h4h.hidden = !(m && m.handForHand);
    var number = $("table-number");
    if (number) {
      number.hidden = !(m && m.tableNumber);
      number.textContent = m && m.tableNumber ? "Table " + m.tableNumber : "";
    }
    if (!player) return;
    $("mtt-view").hidden = !m;
    if (!m) return;
    var you = game.you;
    var transit = you && you.status === "in_transit";
    $("mtt-table").textContent = m.tableNumber ? String(m.tableNumber) : (transit ? "moving…" : "—");
    $("mtt-left").textContent = chips(m.playersLeft);
    $("mtt-average").textContent = chips(m.averageStack);
    var mv = game.tournamentMyView;
    var out = you && (you.status === "eliminated" || (you.stack === 0 && !transit));
    $("mtt-place").textContent = mv && !out ? mv.rank + " of " + chips(m.playersLeft) : "—";
    $("mtt-paid").textContent = chips(m.paidPlaces);
    $("mtt-bubble").textContent = m.placesToTheMoney > 0
      ? m.placesToTheMoney + (m.placesToTheMoney === 1 ? " bust" : " busts")
      : "in the money";
    var late = $("mtt-late");
    var reg = m.lateRegistration;
    late.hidden = !reg;
    if (reg) {
      late.textContent = reg.open
        ? "Late registration is open until " + new Date(reg.closesAt).toLocaleTimeString() + ": the field and the prizes may still grow."
        : "Late registration is closed: the field is final.";
    }
    // A table change the event did not announce (a page opened mid-move, a missed frame).
    if (m.tableNumber) {
      if (tableNumber !== null && m.tableNumber !== tableNumber && movedShown !== m.tableNumber) {
        showMoved("You moved from table " + tableNumber + " to table " + m.tableNumber + ".", m.tableNumber);
      }
      tableNumber = m.tableNumber;
    }
  }

  function showMoved(text, to) {
    var node = $("moved");
    if (!node) return;
    if (movedShown !== to || node.hidden) log(text);  // the event after the state: once in the log
    movedShown = to;
    node.textContent = text;
    node.hidden = false;
  }

  function me() { return game && game.you ? game.you.playerId : null; }

  function myTurn() {
    return !!(game && required && game.you && game.you.toAct &&
      required.handNumber === game.handNumber && required.turn === game.turn);
  }

  function renderActions() {
    var legal = myTurn() ? required.legalActions : null;
    var actions = legal ? legal.actions : [];
    var hand = game && game.hand;
    var maxBet = 0;
    if (hand && hand.players) hand.players.forEach(function (p) { if (p.bet > maxBet) maxBet = p.bet; });
    var canRaise = actions.indexOf("raise") >= 0;
    var allowed = {
      fold: actions.indexOf("fold") >= 0,
      check: actions.indexOf("check") >= 0,
      call: actions.indexOf("call") >= 0,
      bet: canRaise && maxBet === 0,
      raise: canRaise && maxBet > 0,
      all_in: actions.indexOf("all_in") >= 0
    };
    var busy = pending !== null || !socket || socket.readyState !== WebSocket.OPEN;
    document.querySelectorAll("#actions button").forEach(function (b) {
      b.disabled = busy || !allowed[b.getAttribute("data-act")];
    });
    $("to-call").textContent = legal ? (legal.toCall ? "To call: " + chips(legal.toCall) : "Nothing to call") +
      (canRaise ? " · raise to " + chips(legal.minRaiseTo) + "–" + chips(legal.maxRaiseTo) : "") : "";
    var amount = $("amount");
    var range = $("amount-range");
    var off = busy || !canRaise;
    [amount, range].forEach(function (input) {
      input.disabled = off;
      if (canRaise) { input.min = legal.minRaiseTo; input.max = legal.maxRaiseTo; }
    });
    document.querySelectorAll(".shortcuts button").forEach(function (b) { b.disabled = off; });
    if (canRaise && amount.getAttribute("data-turn") !== turnKey()) {
      amount.setAttribute("data-turn", turnKey());
      amount.value = legal.minRaiseTo;
      range.value = legal.minRaiseTo;
    }
    renderAdvice();
  }

  function turnKey() { return required ? required.handNumber + ":" + required.turn : ""; }

  function renderAdvice() {
    var box = $("advice");
    if (!box) return;
    var current = advice && required && myTurn() &&
      advice.handNumber === required.handNumber && advice.turn === required.turn;
    box.hidden = !current;
    if (!current) { box.textContent = ""; return; }
    var names = { fold: "Fold", check: "Check", call: "Call", raise: "Raise", all_in: "All-in" };
    var text = "CoPilot suggests " + (names[advice.action] || advice.action) +
      (advice.amount !== null && advice.amount !== undefined ? " " + chips(advice.amount) : "");
    box.textContent = "";
    box.appendChild(el("strong", "", text));
    if (advice.reason) box.appendChild(el("span", "reason", " — " + advice.reason));
  }

  // ---- acting ------------------------------------------------------------------------------
  function act(kind) {
    if (!myTurn() || pending !== null || !socket || socket.readyState !== WebSocket.OPEN) return;
    var message = { type: "act", handNumber: required.handNumber, turn: required.turn };
    if (kind === "bet" || kind === "raise") {
      var value = $("amount").value.trim();
      message.action = "raise";
      message.amount = /^\d+$/.test(value) ? Number(value) : value;
    } else {
      message.action = kind;
    }
    requests += 1;
    pending = "act-" + requests;
    message.requestId = pending;
    showRefusal("");
    socket.send(JSON.stringify(message));
    renderActions();
  }

  function potFraction(fraction) {
    if (!myTurn() || !game.hand) return;
    var legal = required.legalActions;
    var maxBet = 0;
    game.hand.players.forEach(function (p) { if (p.bet > maxBet) maxBet = p.bet; });
    // A raise to the current bet plus the fraction of the pot after calling.
    var to = maxBet + Math.round(fraction * (game.hand.pot + legal.toCall));
    to = Math.min(legal.maxRaiseTo, Math.max(legal.minRaiseTo, to));
    $("amount").value = to;
    $("amount-range").value = to;
  }

  function wireControls() {
    document.querySelectorAll("#actions button").forEach(function (b) {
      b.addEventListener("click", function () { act(b.getAttribute("data-act")); });
    });
    document.querySelectorAll(".shortcuts button").forEach(function (b) {
      b.addEventListener("click", function () { potFraction(Number(b.getAttribute("data-pot"))); });
    });
    $("amount-range").addEventListener("input", function () { $("amount").value = $("amount-range").value; });
    $("amount").addEventListener("input", function () { $("amount-range").value = $("amount").value; });
    $("amount").addEventListener("keydown", function (e) {
      if (e.key !== "Enter") return;
      e.preventDefault();
      var bet = document.querySelector('#actions button[data-act="bet"]');
      act(bet && !bet.disabled ? "bet" : "raise");
    });
    $("sit-in").addEventListener("click", async function () {
      var answer = await window.sng.call("POST", cfg.sitIn);
      if (!answer.ok) showRefusal(window.sng.refusal(answer.body));
      else showRefusal("");
    });
  }

  // ---- the stream's messages ---------------------------------------------------------------
  function handResult(data) {
    var offset = isRoom ? 1 : 0;  // a room's events number seats from 1 (docs/events.md)
    var won = {};
    var sat = (data.tableId && dealt[data.tableId + ":" + data.handNumber]) || {};
    (data.pots || []).forEach(function (p) {
      Object.keys(p.winners || {}).forEach(function (seat) {
        var name = sat[Number(seat) - offset] || playerAt(Number(seat) - offset);
        won[name] = (won[name] || 0) + p.winners[seat];
      });
    });
    var parts = Object.keys(won).map(function (name) { return name + " wins " + chips(won[name]); });
    var text = "Hand " + data.handNumber + ": " + (parts.join(", ") || "over");
    var box = $("result");
    box.textContent = text;
    log(text);
    if (resultTimer) clearTimeout(resultTimer);
    resultTimer = setTimeout(function () { box.textContent = ""; }, 6000);
  }

  function over() {
    var node = $("over");
    if (!node.hidden) return;
    node.hidden = false;
    $("over-text").textContent = isRoom ? "The room is closed." : "The tournament is over.";
    var link = $("results-link");
    if (link) link.hidden = false;
  }

  function onMessage(kind, data) {
    switch (kind) {
      case "game_state":
        game = data;
        noteDealt(data);
        render();
        // Hand results the stream replayed before it knew this player's table: this table's.
        early.splice(0).forEach(function (result) {
          if (!game.tableId || result.tableId === game.tableId) handResult(result);
        });
        break;
      case "action_required":
        var before = turnKey();
        required = data;
        if (turnKey() !== before) showRefusal("");  // a new turn: the last refusal is old news
        render();
        break;
      case "act_result":
        pending = null;
        render();
        break;
      case "error":
        pending = null;
        showRefusal(window.sng.refusal(data));
        if (game) render();
        break;
      case "advice":
        advice = data;
        renderAdvice();
        break;
      case "hand_result":
        // A multi-table tournament's log carries every table's hands: show this table's.
        if (data.tableId && !game) { early.push(data); break; }  // which table is ours?
        if (data.tableId && game && game.tableId && data.tableId !== game.tableId) break;
        handResult(data);
        break;
      case "player_moved":
        if (player && data.playerId === me()) {
          var where = data.fromTable === data.toTable
            ? "You were reseated at table " + data.toTable + ", seat " + (data.seat + 1)
            : "You moved from table " + data.fromTable + " to table " + data.toTable + ", seat " + (data.seat + 1);
          showMoved(where + " " + (REASONS[data.reason] || "") + ".", data.toTable);
        } else {
          log(data.playerId + " moved from table " + data.fromTable + " to table " + data.toTable);
        }
        break;
      case "table_broken":
        log("Table " + data.tableNumber + " broke");
        break;
      case "hand_for_hand":
        log(data.on ? "Hand-for-hand begins: " + data.playersLeft + " players left" : "Hand-for-hand is over");
        break;
      case "final_table":
        log("The final table forms");
        break;
      case "late_registration_closed":
        log("Late registration closed: " + data.fieldSize + " entries, prize pool " + chips(data.prizePool));
        break;
      case "player_eliminated":
        log(data.playerId + " is out in place " + data.place);
        break;
      case "blind_level_changed":
        log("Level " + (data.level + 1) + ": blinds " + chips(data.smallBlind) + "/" + chips(data.bigBlind));
        break;
      case "tournament_state_changed":
        log("The tournament is " + data.state);
        if (["ended", "settling", "closed", "cancelled"].indexOf(data.state) >= 0) over();
        break;
      case "tournament_ended":
        log("The tournament has ended");
        over();
        break;
      case "tournament_payout_settled":
        log(data.userId + " is paid " + chips(data.amount) + " for place " + data.position);
        break;
      case "hand_start":
        (data.seats || []).forEach(function (s) { seen[s.seat - 1] = s.player; });
        break;
      case "player_join":
        seen[data.seat - 1] = data.player;
        log(data.player + " sits down");
        break;
      case "player_leave":
        log(data.player + " leaves with " + chips(data.returned));
        break;
      case "room_status":
        log("The room is " + data.status);
        if (data.status === "closed") over();
        break;
      case "end":
        ended = true;
        over();
        break;
      default:
        break;
    }
  }

  function frameOf(raw) {
    try { return JSON.parse(raw); } catch (e) { return null; }
  }

  // The seated person's own socket, resumed with ?after= and a back-off when it drops.
  function openSocket(path) {
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path +
      (lastId ? "?after=" + encodeURIComponent(lastId) : "");
    var ws = new WebSocket(url);
    socket = ws;
    ws.addEventListener("open", function () {
      root.setAttribute("data-connections", String(Number(cfg.connections || "0") + 1));
      cfg.connections = root.getAttribute("data-connections");
      backoff = 1000;
      setConn("");
      // Before a tournament's table exists its stream has no game state yet.
      if (!game) $("turn").textContent = "Waiting for the table…";
      else if (player) renderActions();
    });
    ws.addEventListener("message", function (event) {
      var frame = frameOf(event.data);
      if (!frame) return;
      if (frame.id) lastId = frame.id;
      onMessage(frame.event, frame.data || {});
      if (!player && frame.event !== "end") refreshState();
    });
    ws.addEventListener("close", function (event) {
      if (socket === ws) socket = null;
      pending = null;
      if (game && player) renderActions();
      if (ended) { setConn(""); return; }
      if (event.code === 4401) { setConn("Your session has ended: sign in again."); return; }
      if (event.code === 4404) { setConn("There is no such table."); return; }
      setConn("Reconnecting…");
      setTimeout(function () { openSocket(path); }, backoff);
      backoff = Math.min(backoff * 2, 15000);
    });
  }

  // An observer's game state: read once when the page opens and again after each public event.
  var reading = false;
  var again = false;
  async function refreshState() {
    if (reading) { again = true; return; }
    reading = true;
    try {
      do {
        again = false;
        var answer = await window.sng.call("GET", cfg.state);
        if (answer.ok && answer.body) {
          game = answer.body;
          noteDealt(game);
          render();
        }
      } while (again);
    } finally {
      reading = false;
    }
  }

  function openEvents(path) {
    var source = new EventSource(path);
    EVENT_TYPES.forEach(function (type) {
      source.addEventListener(type, function (event) {
        var data = frameOf(event.data) || {};
        setConn("");
        onMessage(type, data);
        if (cfg.signedIn === "yes") refreshState();
      });
    });
    source.addEventListener("open", function () { setConn(""); });
    source.addEventListener("error", function () {
      // The browser reconnects by itself (Last-Event-ID); a 204 after the end stops it.
      setConn(source.readyState === EventSource.CLOSED ? "" : "Reconnecting…");
    });
  }

  // The countdowns (deadline, grace, next level) redraw from the state already held.
  setInterval(function () { if (game) render(); }, 1000);

  window.sngTable = {
    get socket() { return socket; },
    get game() { return game; }
  };

  if (player) {
    wireControls();
    openSocket(cfg.socket);
  } else {
    // A tournament's game state needs a credential: an anonymous observer reads the events.
    if (isRoom || cfg.signedIn === "yes") refreshState();
    else $("turn").textContent = "Sign in to see the table; its events follow below.";
    if (isRoom) openSocket(cfg.public);
    else openEvents(cfg.public);
  }
})();
