"""A separate OS process (a "kernel") that runs one Thread send through the public API on a shared SQLite store.

Usage: python thread_worker.py '<json spec>'. The spec names the store file, the reference driver's session
directory, the thread key and what to send; reports are JSON lines on stdout; a line on stdin opens the Gate of a
``gate`` run.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from adaptor_nb import Agent, MessageUpdate, Notice, RunError
from adaptor_nb.drivers import reference
from adaptor_nb.threadstore import SQLiteStore


def report(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields, default=str) + "\n")
    sys.stdout.flush()


async def stdin_line() -> str:
    return await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)


async def main(spec: dict[str, Any]) -> None:
    if "lease_ttl" in spec:
        # The core's lease lifetime is a module constant; a short one lets a crash test see the expiry quickly.
        import adaptor_nb._core._binding as core_thread

        core_thread.LEASE_TTL = float(spec["lease_ttl"])
    gate = reference.Gate()
    turns: list[reference.Turn] = []
    if spec.get("gate"):
        turns.append(reference.Turn(reference.Text("working on it"), gate, reference.Text("finished")))
    if spec.get("fail"):
        turns.append(reference.Turn(reference.Text("partial answer"), reference.Fail("the provider broke")))
    scenario = reference.Scenario(*turns) if turns else None
    driver = reference.Driver(reference.Config(state_dir=spec["state"], scenario=scenario))
    store = SQLiteStore(spec["db"])
    agent = Agent(driver, model=spec.get("model", "m"), workspace=spec["workspace"], thread_store=store)
    try:
        thread = agent.thread(spec["key"])
        before = await thread.checkpoint()
        report(
            event="checkpoint",
            session_id=before.session_id if before else None,
            run_id=before.run_id if before else None,
        )
        options: dict[str, Any] = {}
        if spec.get("id"):
            options["id"] = spec["id"]
        stream = thread.send(spec["prompt"], **options)
        notices: list[dict[str, Any]] = []
        updates: list[dict[str, Any]] = []

        async def watch() -> None:
            async for ev in stream.events():
                if isinstance(ev, Notice) and ev.kind.startswith("thread."):
                    notices.append({"kind": ev.kind, "data": ev.data})
                elif isinstance(ev, MessageUpdate):
                    updates.append({"id": ev.id, "state": ev.state.name, "mechanism": ev.mechanism})

        watcher = asyncio.ensure_future(watch())
        if spec.get("gate"):
            reached = asyncio.ensure_future(gate.reached.wait())
            await asyncio.wait([reached, watcher], return_when=asyncio.FIRST_COMPLETED)
            if reached.done():
                report(event="running", run_id=stream.run_id)
                if spec.get("message"):
                    await stream.send(spec["message"], id=spec["message_id"])
                    report(event="sent", id=spec["message_id"])
                await stdin_line()
                gate.open()
            else:
                reached.cancel()
        try:
            result = await stream.result()
        except RunError as exc:
            await watcher
            report(event="result", ok=False, error=type(exc).__name__, message=exc.message, notices=notices)
        except Exception as exc:
            await watcher
            report(event="result", ok=False, error=type(exc).__name__, message=str(exc), notices=notices)
        else:
            await watcher
            after = await thread.checkpoint()
            report(
                event="result",
                ok=True,
                text=result.text,
                turns=result.turns,
                run_id=result.run_id,
                messages=[{"id": m.id, "state": m.state.name} for m in result.messages()],
                updates=updates,
                notices=notices,
                session_id=after.session_id if after else None,
                checkpoint_run_id=after.run_id if after else None,
            )
    finally:
        await agent.close()
        store.close()


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
