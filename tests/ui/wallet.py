"""A browser wallet for the page tests: an EIP-1193 ``window.ethereum`` backed by anvil.

In real life a wallet extension injects ``window.ethereum`` and makes the node calls itself
(the page's Content-Security-Policy lets it talk to its own origin only). Here
``page.add_init_script`` injects a provider whose ``request({method, params})`` goes through
``page.expose_function`` to :meth:`InjectedWallet.handle`, which forwards the calls a wallet
answers to anvil's JSON-RPC for one of anvil's unlocked accounts: anvil itself signs
``personal_sign`` and ``eth_signTypedData_v4``. So the typed data the page builds is what
gets signed, and the server and the contract check that signature.

A test plays the person deciding in the wallet: ``wallet.declines.add("eth_signTypedData_v4")``
answers that request with EIP-1193's ``4001`` (user rejected), and ``wallet.chain_id`` makes
the wallet report another chain than anvil's.
"""

from __future__ import annotations

from typing import Any

import httpx
from playwright.async_api import Page

PROVIDER = """
(() => {
  const listeners = {};
  window.ethereum = {
    isSngTestWallet: true,
    async request(args) {
      const method = args && args.method;
      const params = args && args.params !== undefined ? args.params : [];
      const answer = await window.__sngWallet(method, params);
      if (answer.error) {
        const err = new Error(answer.error.message);
        err.code = answer.error.code;
        throw err;
      }
      return answer.result;
    },
    on(event, listener) { (listeners[event] = listeners[event] || []).push(listener); },
    removeListener(event, listener) {
      listeners[event] = (listeners[event] || []).filter((l) => l !== listener);
    },
  };
  window.__sngWalletEmit = (event, value) => (listeners[event] || []).forEach((l) => l(value));
})();
"""

FORWARDED = frozenset(
    {"eth_chainId", "eth_call", "eth_blockNumber", "personal_sign", "eth_signTypedData_v4"}
)
"""What a wallet answers for a page, forwarded to the node (signing with the account)."""

SIGNING = {"personal_sign": 1, "eth_signTypedData_v4": 0}
"""Signing methods and where their params name the signing account."""

REJECTED = {"code": 4001, "message": "User rejected the request."}
UNAUTHORIZED = {"code": 4100, "message": "The requested account has not been authorized."}


class InjectedWallet:
    def __init__(self, rpc_url: str, account: str) -> None:
        self.rpc_url = rpc_url
        self.account = account
        self.connected = False
        self.declines: set[str] = set()
        """Methods the person declines in the wallet (answered with 4001)."""
        self.chain_id: int | None = None
        """When set, the chain the wallet says it is on instead of anvil's."""
        self.requests: list[str] = []
        """Every method the page asked for, in order."""

    async def install(self, page: Page) -> None:
        await page.expose_function("__sngWallet", self.handle)
        await page.add_init_script(PROVIDER)

    async def handle(self, method: str, params: list[Any]) -> dict[str, Any]:
        self.requests.append(method)
        if method in self.declines:
            return {"error": REJECTED}
        if method == "eth_requestAccounts":
            self.connected = True
            return {"result": [self.account]}
        if method == "eth_accounts":
            return {"result": [self.account] if self.connected else []}
        if method == "eth_chainId" and self.chain_id is not None:
            return {"result": hex(self.chain_id)}
        if method in SIGNING:
            signer = params[SIGNING[method]] if len(params) > SIGNING[method] else None
            if not self.connected or str(signer).lower() != self.account.lower():
                return {"error": UNAUTHORIZED}
        if method not in FORWARDED:
            return {"error": {"code": 4200, "message": f"{method} is not supported"}}
        async with httpx.AsyncClient(timeout=30) as http:
            answer = (
                await http.post(
                    self.rpc_url,
                    json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                )
            ).json()
        if "error" in answer:
            return {"error": {"code": answer["error"].get("code", -32603), **answer["error"]}}
        return {"result": answer["result"]}
