"""Starts a stdio MCP server with environment values a CLI forwarded under private names.

Usage: ``python -I _mcp_exec.py NAME=PRIVATE ... -- COMMAND ARG...``. Each ``PRIVATE`` variable is renamed to
``NAME`` (and removed), then COMMAND replaces this process. Standard library only: it runs without the package.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> None:
    split = argv.index("--")
    env = dict(os.environ)
    for pair in argv[:split]:
        name, private = pair.split("=", 1)
        env[name] = env.pop(private, "")
    command = argv[split + 1 :]
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    main(sys.argv[1:])
