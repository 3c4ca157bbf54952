// The wallet page (templates/wallet.html, api/play/wallet.py): connect a browser wallet
// (EIP-1193), bind it to the account, pay an on-chain entry with an ERC-2612 permit built
// here as EIP-712 typed data and signed in the wallet, leave with the refund to the wallet.
// The page never reaches the node: the wallet makes its own node calls (eth_call here).
(function () {
  "use strict";
  var page = document.getElementById("wallet-page");
  if (!page) return;
  var tid = page.getAttribute("data-tournament-id");
  var me = page.getAttribute("data-me");
  var NONCES = "0x7ecebe00"; // nonces(address): the owner's next permit nonce
  var BALANCE_OF = "0x70a08231"; // balanceOf(address)
  var PERMIT_SECONDS = 3600; // how long a signed permit stays usable
  var PERMIT_TYPES = {
    EIP712Domain: [
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
    ],
    Permit: [
      { name: "owner", type: "address" },
      { name: "spender", type: "address" },
      { name: "value", type: "uint256" },
      { name: "nonce", type: "uint256" },
      { name: "deadline", type: "uint256" },
    ],
  };
  var STATUS = { reserved: "Registered: the entry is not paid", paid: "Paid" };

  var state = {
    info: null, // GET /chain/permit-info
    tournament: null, // GET /tournaments/{id}
    account: null,
    chainId: null,
    bound: false,
    paidWith: null, // the wallet this page paid the entry with
    busy: false,
  };

  function el(id) { return document.getElementById(id); }
  function refuse(text) {
    var node = el("wallet-refusal");
    node.textContent = text || "";
    node.hidden = !text;
  }
  function tell(text) {
    var node = el("wallet-message");
    node.textContent = text || "";
    node.hidden = !text;
  }
  function same(a, b) { return !!a && !!b && a.toLowerCase() === b.toLowerCase(); }
  function chipsText(amount) { return amount.toLocaleString("en-US") + " CHIP"; }

  function provider() { return window.ethereum || null; }
  function wallet(method, params) {
    return provider().request({ method: method, params: params || [] });
  }
  // A wallet's refusal (EIP-1193 provider errors) as a sentence; `declined` when the person
  // said no in the wallet.
  function walletSentence(err, declined) {
    var code = err && err.code;
    if (code === 4001) return declined;
    if (code === 4100) return "Your wallet has not given this page access: connect it again.";
    if (code === 4200) return "Your wallet cannot do this: try another wallet.";
    if (code === 4900 || code === 4901) return "Your wallet is not connected to a network.";
    var detail = err && err.message ? ": " + err.message : ".";
    return "Your wallet could not do this" + detail;
  }
  function me_entry() {
    var t = state.tournament;
    if (!t) return null;
    for (var i = 0; i < t.entrants.length; i++) {
      if (t.entrants[i].playerId === me) return t.entrants[i];
    }
    return null;
  }
  function onChain() { return !!state.tournament && state.tournament.moneyBackend === "chain"; }
  function rightChain() { return !!state.info && state.chainId === state.info.chainId; }

  function render() {
    var t = state.tournament;
    var entry = me_entry();
    var registering = !!t && t.state === "registering";
    if (t) {
      el("tournament-name").textContent = t.name;
      el("entry-fee").textContent = chipsText(t.entryFee);
      el("entry-status").textContent = entry ? STATUS[entry.status] || entry.status : "No entry";
      el("pay").textContent = "Pay entry (" + chipsText(t.entryFee) + ")";
    }
    var ready = onChain() && !!state.info && !!state.account && rightChain();
    el("connect").hidden = !onChain();
    el("connect").textContent = state.account ? "Reconnect wallet" : "Connect wallet";
    el("connect").className = state.account ? "secondary" : "";
    el("bind").hidden = !(ready && !state.bound);
    el("register").hidden = !(onChain() && registering && !entry);
    el("pay").hidden = !(ready && state.bound && registering && entry && entry.status === "reserved");
    el("leave").hidden = !(onChain() && registering && entry);
    el("wallet-address").textContent = state.account || "not connected";
    el("wallet-chain").textContent = state.chainId === null ? "—" : String(state.chainId) +
      (state.account && !rightChain() ? " (not this tournament's chain)" : "");
    el("wallet-bound").textContent = !state.account ? "—" :
      state.bound ? "Bound to your account" : "Not bound to your account yet";
    var buttons = ["connect", "bind", "register", "pay", "leave"];
    for (var i = 0; i < buttons.length; i++) el(buttons[i]).disabled = state.busy;
  }

  // Where the keyboard goes when the button it was on is gone: the next step.
  var NEXT_STEP = ["pay", "bind", "register", "leave", "connect"];
  function keepFocus(before) {
    if (!before.hidden) {
      before.focus(); // disabled while busy, it lost the focus
      return;
    }
    for (var i = 0; i < NEXT_STEP.length; i++) {
      var next = el(NEXT_STEP[i]);
      if (!next.hidden) {
        next.focus();
        return;
      }
    }
  }

  // One person's action at a time; each starts with a clean slate of messages.
  function action(run) {
    return async function () {
      if (state.busy) return;
      var before = document.activeElement;
      state.busy = true;
      refuse("");
      tell("");
      render();
      try {
        await run();
      } catch (err) {
        refuse("Something went wrong: " + (err && err.message ? err.message : String(err)));
      } finally {
        state.busy = false;
        render();
        if (before && before.tagName === "BUTTON" && page.contains(before)) keepFocus(before);
      }
    };
  }

  async function loadTournament() {
    var answer = await window.sng.call("GET", "/tournaments/" + encodeURIComponent(tid));
    if (!answer.ok) {
      refuse(window.sng.refusal(answer.body));
      return false;
    }
    state.tournament = answer.body;
    return true;
  }

  function word(address) { return "000000000000000000000000" + address.slice(2).toLowerCase(); }
  async function readUint(selector, address) {
    var out = await wallet("eth_call", [
      { to: state.info.tokenAddress, data: selector + word(address) }, "latest",
    ]);
    return out && out !== "0x" ? BigInt(out) : 0n;
  }
  async function readChips() {
    if (!state.account || !rightChain()) {
      el("wallet-chips").textContent = "—";
      return;
    }
    try {
      el("wallet-chips").textContent = chipsText(await readUint(BALANCE_OF, state.account));
    } catch (err) {
      el("wallet-chips").textContent = "unknown (the wallet could not read it)";
    }
  }
  async function readBound() {
    var answer = await window.sng.call("GET", "/me/wallets");
    if (!answer.ok) {
      refuse(window.sng.refusal(answer.body));
      return;
    }
    state.bound = answer.body.some(function (w) { return same(w.address, state.account); });
  }
  async function readWallet() {
    state.chainId = parseInt(await wallet("eth_chainId"), 16);
    if (!rightChain()) {
      refuse("Your wallet is on chain " + state.chainId + ", but entries here are paid on chain " +
        state.info.chainId + ": switch networks in your wallet.");
      el("wallet-chips").textContent = "—";
      return;
    }
    await readBound();
    await readChips();
  }

  var connect = action(async function () {
    if (!provider()) {
      refuse("No browser wallet was found: install a wallet extension and reload this page.");
      return;
    }
    if (!state.info) {
      refuse("This service does not say which chain to pay on: try again later.");
      return;
    }
    var accounts;
    try {
      accounts = await wallet("eth_requestAccounts");
    } catch (err) {
      refuse(walletSentence(err, "You declined the connection in your wallet."));
      return;
    }
    if (!accounts || !accounts.length) {
      refuse("Your wallet shared no account: unlock it and connect again.");
      return;
    }
    state.account = accounts[0];
    await readWallet();
  });

  function utf8Hex(text) {
    var bytes = new TextEncoder().encode(text);
    var out = "0x";
    for (var i = 0; i < bytes.length; i++) out += bytes[i].toString(16).padStart(2, "0");
    return out;
  }

  var bind = action(async function () {
    var account = state.account;
    var challenge = await window.sng.call("POST", "/me/wallets/challenge", { address: account });
    if (!challenge.ok) {
      refuse(window.sng.refusal(challenge.body));
      return;
    }
    var signature;
    try {
      signature = await wallet("personal_sign", [utf8Hex(challenge.body.message), account]);
    } catch (err) {
      refuse(walletSentence(err, "You declined the signature in your wallet: the wallet is not bound."));
      return;
    }
    var bound = await window.sng.call("POST", "/me/wallets", {
      nonce: challenge.body.nonce, signature: signature,
    });
    if (!bound.ok) {
      refuse(window.sng.refusal(bound.body));
      return;
    }
    state.bound = true;
    tell("This wallet is bound to your account: it can pay your entries.");
  });

  var register = action(async function () {
    var answer = await window.sng.call("POST", "/tournaments/" + encodeURIComponent(tid) + "/register", {});
    if (!answer.ok) refuse(window.sng.refusal(answer.body));
    await loadTournament();
  });

  // The permit's typed data (ERC-2612 over EIP-712): the token's domain, the vault as spender,
  // exactly the entry fee, the owner's current nonce, a deadline an hour away.
  function permitTypedData(owner, value, nonce, deadline) {
    return {
      types: PERMIT_TYPES,
      primaryType: "Permit",
      domain: {
        name: state.info.tokenName,
        version: state.info.tokenVersion,
        chainId: state.info.chainId,
        verifyingContract: state.info.tokenAddress,
      },
      message: {
        owner: owner,
        spender: state.info.vaultAddress,
        value: String(value),
        nonce: nonce.toString(),
        deadline: String(deadline),
      },
    };
  }
  function split(signature) {
    var hex = signature.slice(0, 2) === "0x" ? signature.slice(2) : signature;
    if (!/^[0-9a-fA-F]{130}$/.test(hex)) return null;
    var v = parseInt(hex.slice(128, 130), 16);
    return { r: "0x" + hex.slice(0, 64), s: "0x" + hex.slice(64, 128), v: v < 27 ? v + 27 : v };
  }

  var pay = action(async function () {
    var owner = state.account;
    var fee = state.tournament.entryFee;
    var deadline = Math.floor(Date.now() / 1000) + PERMIT_SECONDS;
    var signature;
    try {
      var nonce = await readUint(NONCES, owner);
      var typed = permitTypedData(owner, fee, nonce, deadline);
      signature = await wallet("eth_signTypedData_v4", [owner, JSON.stringify(typed)]);
    } catch (err) {
      refuse(walletSentence(err, "You declined the signature in your wallet: nothing was paid."));
      return;
    }
    var parts = split(signature);
    if (parts === null) {
      refuse("Your wallet returned a signature this page cannot read: nothing was paid.");
      return;
    }
    var answer = await window.sng.call("POST", "/tournaments/" + encodeURIComponent(tid) + "/pay", {
      amount: fee,
      permit: {
        owner: owner, spender: state.info.vaultAddress, value: fee, deadline: deadline,
        v: parts.v, r: parts.r, s: parts.s,
      },
    });
    if (!answer.ok) {
      refuse(window.sng.refusal(answer.body));
    } else {
      state.paidWith = owner;
      tell("Paid: the vault holds your entry of " + chipsText(fee) + ".");
    }
    await loadTournament();
    await readChips();
  });

  var leave = action(async function () {
    var answer = await window.sng.call("POST", "/tournaments/" + encodeURIComponent(tid) + "/leave");
    if (!answer.ok) {
      refuse(window.sng.refusal(answer.body));
    } else if (answer.body.refunded > 0) {
      tell(chipsText(answer.body.refunded) + " refunded to " +
        (state.paidWith || "the wallet that paid the entry") + ".");
    } else {
      tell("You left the tournament: nothing had been paid.");
    }
    state.paidWith = null;
    await loadTournament();
    await readChips();
  });

  async function start() {
    var info = await window.sng.call("GET", "/chain/permit-info");
    if (info.ok) state.info = info.body;
    if (!(await loadTournament())) {
      render();
      return;
    }
    if (!onChain()) {
      refuse("This tournament's entry is paid from your virtual balance, not with a wallet: " +
        "pay it on the tournament page.");
    } else if (!info.ok) {
      refuse(window.sng.refusal(info.body));
    }
    render();
  }

  el("connect").addEventListener("click", connect);
  el("bind").addEventListener("click", bind);
  el("register").addEventListener("click", register);
  el("pay").addEventListener("click", pay);
  el("leave").addEventListener("click", leave);
  var eth = provider();
  if (eth && eth.on) {
    // The person switched networks or accounts in the wallet: read it again.
    eth.on("chainChanged", action(async function () { if (state.account) await readWallet(); }));
    eth.on("accountsChanged", action(async function () {
      var accounts = await wallet("eth_accounts");
      state.account = accounts && accounts.length ? accounts[0] : null;
      state.bound = false;
      if (state.account) await readWallet();
    }));
  }
  start();
})();
