"""Record the real CLI's stdout for one prompt into a fixture file (run by hand when the CLI version changes).

Usage: ``python -m tests.claude.record_fixture OUT.jsonl "prompt with [[directives]]" [--full]``. The CLI runs
offline against the fake Anthropic server with a private HOME; echoes of our own input are left out.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from adaptor_nb.driver._claude_family import EOF, LINES
from adaptor_nb.driver._claude_family import ClaudeFamilyProcess as ClaudeProcess
from adaptor_nb.drivers.claude._driver import PROFILE
from adaptor_nb.testing._anthropic import FakeAnthropicServer
from adaptor_nb.testing._clis import find_cli

from .conftest import QUIET_ENV


async def record(out: str, prompt: str, bare: bool) -> None:
    cli = find_cli("claude")
    assert cli, "Claude Code is not installed"
    with FakeAnthropicServer() as fake:
        env = {"PATH": "/usr/bin:/bin", "HOME": tempfile.mkdtemp(), "ANTHROPIC_BASE_URL": fake.url, **QUIET_ENV}
        env["ANTHROPIC_API_KEY"] = "sk-record"
        argv = [cli, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        argv += ["--replay-user-messages", "--include-partial-messages", "--permission-prompt-tool", "stdio"]
        if bare:
            argv.append("--bare")
        proc = await ClaudeProcess.spawn(argv, profile=PROFILE, cwd=tempfile.mkdtemp(), env=env, fingerprint="")
        proc.send(
            {
                "type": "user",
                "uuid": "00000000-0000-4000-8000-000000000001",
                "message": {"role": "user", "content": prompt},
            }
        )
        lines: list[dict] = []
        try:
            while True:
                item = await asyncio.wait_for(proc.inbox.get(), 60)
                if item[0] == EOF:
                    break
                if item[0] != LINES:
                    continue
                for frame in item[2]:
                    if not isinstance(frame, dict) or frame.get("isReplay") or frame.get("type") == "control_response":
                        continue
                    if frame.get("type") == "control_request":
                        req = frame["request"]
                        proc.send(
                            {
                                "type": "control_response",
                                "response": {
                                    "subtype": "success",
                                    "request_id": frame["request_id"],
                                    "response": {"behavior": "allow", "updatedInput": req.get("input", {})},
                                },
                            }
                        )
                    lines.append(frame)
                    if frame.get("type") == "result":
                        raise StopAsyncIteration
        except StopAsyncIteration:
            pass
        finally:
            await proc.close(1.0)
    await asyncio.to_thread(Path(out).write_text, "".join(json.dumps(f, separators=(",", ":")) + "\n" for f in lines))
    print(f"{out}: {len(lines)} lines")


if __name__ == "__main__":
    asyncio.run(record(sys.argv[1], sys.argv[2], "--full" not in sys.argv))
