"""The API's services (architecture review 2026-12-03, change 4): what the routes, the UI
pages, the WebSocket and the fast path do, over one typed application state
(``api/state.py``). A service never imports a route or a page (import-linter says so)."""
