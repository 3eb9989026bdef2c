#!/usr/bin/env python3
"""A tiny stand-in for a coding-agent CLI: it reads a prompt on stdin and answers in JSON lines on stdout.

Output, one JSON object a line::

    {"type": "session", "id": "echo-..."}        the session this answer belongs to
    {"type": "text", "text": "..."}              a piece of the answer (one per word)
    {"type": "done", "usage": {...}}             the end of the turn, with token counts

The answer is the rest of the line after ``Reply with exactly:`` when the prompt has it, else the prompt itself.
``--fail`` makes it print an error on stderr and exit 3. Standard library only.
"""

from __future__ import annotations

import json
import sys
import uuid

MARKER = "Reply with exactly:"


def answer(prompt: str) -> str:
    _, found, tail = prompt.partition(MARKER)
    return tail.strip().splitlines()[0] if found and tail.strip() else prompt.strip()


def main(argv: list[str]) -> int:
    prompt = sys.stdin.read()
    if "--fail" in argv:
        print("echo: asked to fail", file=sys.stderr)
        return 3
    out = sys.stdout
    out.write(json.dumps({"type": "session", "id": f"echo-{uuid.uuid4().hex[:12]}"}) + "\n")
    words = answer(prompt).split(" ")
    for i, word in enumerate(words):
        out.write(json.dumps({"type": "text", "text": word if i == 0 else " " + word}) + "\n")
    usage = {"input_tokens": len(prompt.split()), "output_tokens": len(words)}
    out.write(json.dumps({"type": "done", "usage": usage}) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
