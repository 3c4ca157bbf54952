"""What every process needs and nothing else: settings, the Temporal client and its data
converter, the payload codec, telemetry, and the dev player tokens. The API, the worker, the
activities and the CLI all import it; it imports none of them (``pyproject.toml``, the
import-linter contracts)."""
