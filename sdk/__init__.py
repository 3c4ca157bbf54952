"""The client library agents use (``sdk.client``), the bundled bots and the demo. It speaks
HTTP to the API and imports nothing of the server (the import-linter contracts)."""
