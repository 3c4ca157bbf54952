"""The `sng` command line (``sng.cli``) and nothing else: every command imports what it runs."""
