"""A real IPython kernel driven over jupyter_client, with a view of the widget comms it opens."""

from __future__ import annotations

import os
import queue
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

# Upper bound for any single wait; a healthy test never gets near it (it only stops a hung test).
WAIT = 60.0


@dataclass
class Execution:
    """What one execute request produced."""

    msg_id: str
    reply: dict[str, Any] | None = None
    outputs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return str(self.reply["status"]) if self.reply else ""

    def text(self) -> str:
        parts = []
        for out in self.outputs:
            if out["msg_type"] == "stream":
                parts.append(out["content"]["text"])
            elif out["msg_type"] in ("display_data", "execute_result"):
                parts.append(out["content"]["data"].get("text/plain", ""))
            elif out["msg_type"] == "error":
                parts.append(f"{out['content']['ename']}: {out['content']['evalue']}")
        return "".join(parts)


class Kernel:
    """One kernel process; every IOPub message is folded into widget states and per-request outputs."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.km = KernelManager(kernel_name="python3", transport="ipc", ip=str(cwd / "kernel-ipc"))
        full_env = {**os.environ, **env}
        self.km.start_kernel(cwd=str(cwd), env=full_env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=WAIT)
        self.widgets: dict[str, dict[str, Any]] = {}
        self.comm_messages: dict[str, int] = {}
        self.executions: dict[str, Execution] = {}
        self.iopub_log: list[dict[str, Any]] = []

    # -- iopub -------------------------------------------------------------------------------------------

    def _fold(self, msg: dict[str, Any]) -> None:
        self.iopub_log.append(msg)
        kind = msg["msg_type"]
        content = msg["content"]
        parent = msg.get("parent_header", {}).get("msg_id", "")
        if kind == "comm_open":
            self.widgets[content["comm_id"]] = dict(content["data"].get("state", {}))
        elif kind == "comm_msg":
            comm = content["comm_id"]
            self.comm_messages[comm] = self.comm_messages.get(comm, 0) + 1
            data = content["data"]
            if data.get("method") == "update" and comm in self.widgets:
                self.widgets[comm].update(data.get("state", {}))
        elif kind in ("stream", "display_data", "execute_result", "error") and parent in self.executions:
            self.executions[parent].outputs.append(msg)

    def _pump(self, timeout: float) -> bool:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            return False
        self._fold(msg)
        return True

    def _pump_replies(self) -> None:
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                return
            parent = reply.get("parent_header", {}).get("msg_id", "")
            if parent in self.executions and reply["msg_type"] == "execute_reply":
                self.executions[parent].reply = reply["content"]

    def wait_for(self, predicate: Callable[[], Any], what: str, timeout: float = WAIT) -> Any:
        """Pump messages until ``predicate()`` is truthy; fail with ``what`` if the kernel never gets there."""
        import time

        deadline = time.monotonic() + timeout
        while True:
            self._pump_replies()
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self._pump(0.05)

    # -- requests ----------------------------------------------------------------------------------------

    def start(self, code: str) -> Execution:
        """Send an execute request without waiting."""
        msg_id = self.kc.execute(code, allow_stdin=False)
        ex = Execution(msg_id)
        self.executions[msg_id] = ex
        return ex

    def finish(self, ex: Execution, timeout: float = WAIT) -> Execution:
        """Wait for the reply and for the kernel to go idle for this request."""
        self.wait_for(lambda: ex.reply is not None, f"the reply to {ex.msg_id}", timeout)
        self.wait_for(lambda: self._idle(ex.msg_id), f"idle after {ex.msg_id}", timeout)
        return ex

    def _idle(self, msg_id: str) -> bool:
        return any(
            m["msg_type"] == "status"
            and m["content"].get("execution_state") == "idle"
            and m.get("parent_header", {}).get("msg_id") == msg_id
            for m in self.iopub_log
        )

    def run(self, code: str, timeout: float = WAIT) -> Execution:
        """Execute ``code`` and wait until it is done."""
        return self.finish(self.start(code), timeout)

    def run_ok(self, code: str) -> Execution:
        ex = self.run(code)
        assert ex.status == "ok", ex.text()
        return ex

    # -- widgets -----------------------------------------------------------------------------------------

    def run_views(self) -> list[tuple[str, dict[str, Any]]]:
        """Every RunView the kernel opened, oldest first, with its current synced state."""
        return [
            (comm, state)
            for comm, state in self.widgets.items()
            if state.get("_model_name") == "AnyModel" and "header" in state and "items" in state
        ]

    def last_view(self) -> tuple[str, dict[str, Any]]:
        views = self.run_views()
        assert views, "no run view was opened"
        return views[-1]

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> None:
        """Send exactly what the front end's ``model.send(content)`` sends."""
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}})
        self.kc.shell_channel.send(msg)

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def shutdown(self) -> None:
        """Stop the kernel (idempotent)."""
        if getattr(self, "_closed", False):
            return
        self._closed = True
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


def new_id() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


PYTHON = sys.executable
