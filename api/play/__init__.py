"""The players' pages under /play: sign in, the lobby, the table, results (issue 29)."""
