"""``%agent serve`` in a real kernel: the endpoint runs in the kernel's loop on loopback, a web run lands in the
notebook's thread (``%agent threads``, the same transcript), and ``%agent serve stop`` ends it."""

from __future__ import annotations

import json
import re

import httpx
import pytest
from notebook.kernel import Kernel


def serve(kernel: Kernel, options: str = "") -> tuple[str, str]:
    out = kernel.run_ok(f"%agent serve {options}".strip()).text()
    url = re.search(r"serving AG-UI 1\.0 at (http://127\.0\.0\.1:\d+/agui)", out)
    token = re.search(r"token: (\S+)", out)
    assert url and token, out
    return url.group(1), token.group(1)


def post(url: str, token: str, thread_id: str, message_id: str, text: str) -> list[dict[str, object]]:
    payload = {"threadId": thread_id, "runId": f"run-{message_id}", "messages": []}
    payload["messages"] = [{"id": message_id, "role": "user", "content": text}]
    headers = {"authorization": f"Bearer {token}"}
    with httpx.Client(timeout=60) as client, client.stream("POST", url, json=payload, headers=headers) as response:
        assert response.status_code == 200
        return [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]


def test_a_web_run_is_the_notebook_threads_run_and_stop_ends_the_endpoint(kernel: Kernel) -> None:
    url, token = serve(kernel, "--thread review")
    events = post(url, token, "from-the-web", "w1", "look at the data")
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED", events[-1]
    threads = kernel.run_ok("%agent threads").text()
    assert "review" in threads
    kernel.run_ok("%%agent --thread review\nand now the plot")
    follow = kernel.run_ok("print(_agent.text)").text()
    assert "1 earlier prompt" in follow  # the cell continued the thread the web run started
    assert "already serving" in kernel.run_ok("%agent serve").text()
    assert "stopping" in kernel.run_ok("%agent serve stop").text()
    assert "not running" in kernel.run_ok("%agent serve status").text()
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json={}, headers={"authorization": f"Bearer {token}"}, timeout=10)


def test_web_threads_are_named_by_their_thread_id_and_the_token_is_required(kernel: Kernel) -> None:
    url, token = serve(kernel)
    refused = httpx.post(url, json={}, timeout=10)
    assert refused.status_code == 401
    events = post(url, token, "web-42", "m1", "hello")
    assert events[-1]["type"] == "RUN_FINISHED"
    assert "web-42" in kernel.run_ok("%agent threads").text()
    bad = kernel.run("%agent serve --port nope")
    assert "--port" in bad.text()
    kernel.run_ok("%agent serve stop")
