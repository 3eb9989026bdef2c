"""A run with a service holding a secret, in a real kernel: the secret is in no output, widget state or repr,
so it cannot end up in a saved notebook."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel import Kernel

SECRET = "nb-service-secret-93ab51"
SERVICE = str(Path(__file__).parent.parent / "services" / "http_service.py")


@pytest.fixture
def secret_kernel(tmp_path: Path, notebook_env: dict[str, str]) -> Iterator[Kernel]:
    k = Kernel(tmp_path, {**notebook_env, "SVC_SECRET": SECRET})
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k
    finally:
        k.shutdown()
        assert not k.km.is_alive()


def test_a_service_secret_stays_out_of_everything_the_notebook_keeps(secret_kernel: Kernel) -> None:
    secret_kernel.run_ok(
        "import os, sys\n"
        "from adaptor_nb import Agent, LocalServices, ServiceSpec\n"
        "from adaptor_nb.drivers import reference\n"
        f"svc = ServiceSpec(name='api', command=[sys.executable, {SERVICE!r}, '{{port}}'],\n"
        "                 ready_line='service ready', secret_env={'SERVICE_TOKEN': os.environ['SVC_SECRET']})\n"
        "a = Agent(reference.Driver(), service_manager=LocalServices(), services=[svc])"
    )
    secret_kernel.run_ok("%%agent --agent a\nhello")
    _, state = secret_kernel.last_view()
    assert state["header"]["state"] == "done"
    shown = secret_kernel.run_ok("print(repr(svc)); print(repr(_agent)); print(_agent.services()); _agent").text()
    assert "api" in shown and "hidden" in shown
    assert SECRET not in json.dumps(secret_kernel.iopub_log, default=str)
    assert SECRET not in json.dumps(secret_kernel.widgets, default=str)
