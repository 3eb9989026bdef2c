"""Record what ``codex app-server`` writes to stdout in a few situations, for the mapping tests in
``tests/codex/test_codex_translate.py``. Run from the repository root::

    .venv/bin/python -m tests.codex.record_fixtures

Each fixture is the raw JSON-RPC stdout of one run of the real CLI against the fake OpenAI server.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from adaptor_nb import Agent, ApprovalMode, ApprovalPolicy, Policy, SandboxLevel, approve_all
from adaptor_nb.drivers.codex import Config, Driver
from adaptor_nb.drivers.codex._home import provider_settings, write_codex_home
from adaptor_nb.testing import FakeOpenAIServer, find_cli
from adaptor_nb.testing._openai import Reply

OUT = Path(__file__).resolve().parent.parent / "fixtures" / "codex"

SCENARIOS: dict[str, tuple[str, list[Reply], Policy, str]] = {
    "text_and_reasoning": ("say hi", [Reply.text("hello there, friend", reasoning="planning a greeting")],
                           Policy(), ""),
    "command": ("run", [Reply.exec_command("echo one; sleep 0.2; echo two; exit 3")],
                Policy(sandbox=SandboxLevel.UNRESTRICTED), ""),
    "patch_approved": ("patch", [Reply.apply_patch("*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n")],
                       Policy(sandbox=SandboxLevel.READ_ONLY, approvals=ApprovalPolicy(permission=ApprovalMode.ASK)),
                       "gpt-5.5"),
    "plan": ("plan", [Reply.function_call("update_plan", {"plan": [{"step": "a", "status": "completed"},
                                                                   {"step": "b", "status": "pending"}]})],
             Policy(), "gpt-5.5"),
    "http500": ("fail [[status 500]]", [], Policy(), ""),
}  # fmt: skip


async def record(name: str, prompt: str, replies: list[Reply], policy: Policy, model: str) -> None:
    codex = find_cli("codex")
    assert codex, "install the Codex CLI first (scripts/setup.sh)"
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeOpenAIServer() as fake:
            home = write_codex_home(
                Path(tmp) / "home",
                {
                    **provider_settings(base_url=fake.base_url, request_max_retries=0, stream_max_retries=0),
                    "tools": {"update_plan": {"enabled": True}},
                },
            )
            fake.enqueue(*replies)
            driver = Driver(
                Config(command=[codex], codex_home=str(home), model=model, env={"HOME": tmp},
                       secret_env={"FAKE_OPENAI_API_KEY": "sk-record"})
            )  # fmt: skip
            async with Agent(driver, workspace=tmp, policy=policy, on_approval=approve_all()) as agent:
                stream = agent.send(prompt)
                try:
                    result = await stream.result()
                    raw = result.raw().stdout
                except Exception as exc:
                    raw = exc.result.raw().stdout  # type: ignore[attr-defined]
    (OUT / f"{name}.jsonl").write_bytes(raw.replace(tmp.encode(), b"/ws"))


async def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (prompt, replies, policy, model) in SCENARIOS.items():
        await record(name, prompt, replies, policy, model)
        print("recorded", name)


if __name__ == "__main__":
    asyncio.run(main())
