"""Built-in drivers: claude, codex, cursor, codebuddy and the offline reference driver (import each by name)."""
