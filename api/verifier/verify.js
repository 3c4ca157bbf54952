// The hand verifier (docs/fairness.md), in the reader's own browser: nothing here trusts the
// server that served the record. Standard WebCrypto only (SHA-256).
"use strict";

const enc = new TextEncoder();
const DECK = 52;

async function H(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}
function cat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
function unhex(s) {
  if (typeof s !== "string" || !/^([0-9a-fA-F]{2})*$/.test(s)) throw new Error("not hex: " + s);
  return new Uint8Array(s.match(/../g) ? s.match(/../g).map((b) => parseInt(b, 16)) : []);
}
function hex(b) { return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join(""); }
function same(a, b) { return a.length === b.length && a.every((x, i) => x === b[i]); }

// The Fisher-Yates shuffle driven by SHA-256(seed || k), k as 8 bytes big-endian.
async function shuffle(items, seed) {
  items = items.slice();
  let k = 0, block = null, off = 32;
  async function next() {
    if (off >= 32) {
      const counter = new Uint8Array(8);
      new DataView(counter.buffer).setBigUint64(0, BigInt(k++));
      block = await H(cat(seed, counter));
      off = 0;
    }
    const u = new DataView(block.buffer).getUint32(off);
    off += 4;
    return u;
  }
  for (let i = items.length - 1; i > 0; i--) {
    const n = i + 1, limit = 2 ** 32 - (2 ** 32 % n);
    let u = await next();
    while (u >= limit) u = await next();
    const j = u % n;
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

async function dealingOrder(root, seeds) {
  const seats = Object.keys(seeds).map(Number).sort((a, b) => a - b);
  const parts = [enc.encode("sng-deck-v2 mix"), root, new Uint8Array([seats.length])];
  for (const seat of seats) {
    const seed = unhex(seeds[String(seat)]);
    parts.push(new Uint8Array([seat, seed.length]), seed);
  }
  return shuffle([...Array(DECK).keys()], await H(cat(...parts)));
}

// RFC 9162 2.1.3.2: the root a leaf and its audit path give, in a tree of 52 leaves.
async function opens(root, item) {
  let fn = item.position, sn = DECK - 1;
  if (!Number.isInteger(fn) || fn < 0 || fn >= DECK || !/^[2-9TJQKA][cdhs]$/.test(item.card)) return false;
  const salt = unhex(item.salt);
  if (salt.length !== 32) return false;
  let r = await H(cat(new Uint8Array([0, fn]), enc.encode(item.card), salt));
  for (const p of item.proof) {
    if (sn === 0) return false;
    if (fn & 1 || fn === sn) {
      r = await H(cat(new Uint8Array([1]), unhex(p), r));
      while (!(fn & 1) && fn !== 0) { fn >>= 1; sn >>= 1; }
    } else {
      r = await H(cat(new Uint8Array([1]), r, unhex(p)));
    }
    fn >>= 1; sn >>= 1;
  }
  return sn === 0 && same(r, root);
}

// Python's json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=True).
function canonical(value) {
  if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
  if (value && typeof value === "object") {
    return "{" + Object.keys(value).sort().map((k) => canonical(k) + ":" + canonical(value[k])).join(",") + "}";
  }
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}
const UNHASHED = ["hash", "settlement", "yourCards"];

function boardIndices(size, n) {
  const streets = { 0: [], 3: [1], 4: [1, 2], 5: [1, 2, 3] }[size];
  if (!streets) return null;
  const at = { 1: [2 * n + 1, 2 * n + 2, 2 * n + 3], 2: [2 * n + 5], 3: [2 * n + 7] };
  return streets.flatMap((s) => at[s]);
}
const holeIndices = (p, n) => [p, n + p];

async function verify(record, previous) {
  const problems = [];
  const deck = record.deck;
  if (!deck || deck.version !== "v2") return ["the record has no card commitments (deck version v2)"];
  const root = unhex(deck.root);
  const order = await dealingOrder(root, deck.seeds || {});
  if (record.deckCommitment != null && record.deckCommitment !== deck.root) problems.push("deckCommitment is not the deck's root");
  const revealed = new Map();
  for (const item of deck.revealed || []) {
    if (!(await opens(root, item))) problems.push(`the card dealt ${item.index}th does not open its commitment`);
    else if (order[item.index] !== item.position) problems.push(`the card dealt ${item.index}th is not from the position the seeds give`);
    revealed.set(item.index, item.card);
  }
  const seats = record.seats, n = seats.length, expected = new Map();
  const board = boardIndices(record.board.length, n);
  if (!board) problems.push(`a board of ${record.board.length} cards`);
  else board.forEach((j, i) => expected.set(j, record.board[i]));
  seats.forEach((seat, p) => {
    const shown = record.shown[String(seat)];
    if (shown) holeIndices(p, n).forEach((j, k) => expected.set(j, shown.cards[k]));
  });
  for (const [j, card] of [...expected].sort((a, b) => a[0] - b[0])) {
    if (revealed.get(j) !== card) problems.push(`the card dealt ${j}th (${card}) is not the one revealed`);
  }
  if ([...revealed.keys()].some((j) => !expected.has(j))) problems.push("cards that were not shown are revealed");
  const mine = record.yourCards;
  if (mine) {
    const p = seats.indexOf(mine.seat);
    const items = mine.openings || [];
    if (p < 0) problems.push("yourCards names a seat that was not dealt");
    else if (JSON.stringify(items.map((i) => i.index)) !== JSON.stringify(holeIndices(p, n))) problems.push("yourCards are not your dealing indices");
    else {
      for (const i of items) {
        if (!(await opens(root, i)) || order[i.index] !== i.position) problems.push("yourCards do not open their commitments");
      }
    }
  }
  const body = Object.fromEntries(Object.entries(record).filter(([k]) => !UNHASHED.includes(k)));
  if (record.hash !== hex(await H(enc.encode(canonical(body))))) problems.push("the record's hash is not the hash of its content");
  if (previous && record.prevHash !== previous) problems.push("the record does not link to the one before it");
  return problems;
}

async function run() {
  const out = document.getElementById("result");
  out.textContent = "checking…";
  try {
    let text = document.getElementById("record").value.trim();
    const url = document.getElementById("url").value.trim();
    if (!text && url) text = await (await fetch(url, { credentials: "same-origin" })).text();
    const record = JSON.parse(text);
    const problems = await verify(record, document.getElementById("previous").value.trim());
    out.className = problems.length ? "fail" : "ok";
    out.textContent = problems.length ? problems.map((p) => "FAIL: " + p).join("\n")
      : `OK: hand ${record.handNumber}: ${record.deck.revealed.length} revealed cards open the root, in the order the seeds give; hash ${record.hash}`;
  } catch (err) {
    out.className = "fail";
    out.textContent = "FAIL: " + err.message;
  }
}
document.getElementById("check").addEventListener("click", run);

// /verify?url=/tournaments/{id}/hands/{n} (the players' results page links here): the record
// of this server at that path is fetched and checked at once. Paths on this server only.
const linked = new URLSearchParams(window.location.search).get("url");
if (linked && linked.startsWith("/") && !linked.startsWith("//")) {
  document.getElementById("url").value = linked;
  run();
}
