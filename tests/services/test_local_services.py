"""Runtime services through the engine, with the built-in LocalServices manager running a real local process."""

from __future__ import annotations

import hashlib
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

import psutil
import pytest

from adaptor_nb import (
    Agent,
    ConfigError,
    Identity,
    LocalServices,
    Notice,
    RunError,
    ServiceRef,
    ServiceReport,
    ServiceRequest,
    ServiceSpec,
    WorkspaceLease,
)
from adaptor_nb.drivers import reference as ref

SERVICE = str(Path(__file__).with_name("http_service.py"))
SECRET = "svc-secret-7d1e2f9a"


def spec(**fields: object) -> ServiceSpec:
    base: dict[str, object] = {
        "name": "api",
        "command": [sys.executable, SERVICE, "{port}"],
        "ready_line": r"service ready on \d+",
        "secret_env": {"SERVICE_TOKEN": SECRET},
        "client_env": {"API_URL": "http://{endpoint}/"},
    }
    base.update(fields)
    return ServiceSpec(**base)  # type: ignore[arg-type]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return str(resp.read().decode())


_BEFORE: set[int] = set()


@pytest.fixture(autouse=True)
def _baseline() -> None:
    """Processes other tests left running (a shared server, a browser) are not this test's children."""
    _BEFORE.clear()
    _BEFORE.update(p.pid for p in psutil.Process().children(recursive=True))


def children() -> list[psutil.Process]:
    """Descendants of this process started during the current test."""
    return [p for p in psutil.Process().children(recursive=True) if p.pid not in _BEFORE]


async def test_a_service_is_up_during_the_run_and_gone_after_it() -> None:
    gate = ref.Gate()
    manager = LocalServices()
    async with Agent(ref.Driver(scenario=ref.Scenario(ref.Turn(gate, "done"))), service_manager=manager) as agent:
        stream = agent.send("hi", services=[spec()])
        await gate.reached.wait()
        (running,) = manager.running()
        assert running.endswith("/api")
        events = []
        async for e in stream.events():
            events.append(e)
            if isinstance(e, Notice) and e.data.get("phase") == "services_ready":
                endpoint = e.data["services"][0]["endpoint"]
                # the service answers, and it was given the secret
                assert fetch(f"http://{endpoint}/") == hashlib.sha256(SECRET.encode()).hexdigest()
                gate.open()
        result = await stream.result()
    (report,) = result.services()
    assert report == ServiceReport(name="api", state="ready", endpoint=endpoint)
    assert manager.running() == [] and children() == []
    phases = [e.data["phase"] for e in events if isinstance(e, Notice) and e.kind == "runtime"]
    assert phases == ["services_preparing", "services_ready", "services_released"]
    shown = repr(events) + repr(result) + repr(result.services()) + repr(spec()) + str(result.transcript())
    assert SECRET not in shown


def test_secret_values_stay_out_of_reprs() -> None:
    r = ServiceRef(name="db", endpoint="127.0.0.1:1", secret_env={"PASSWORD": SECRET})
    assert SECRET not in repr(r) and "1 hidden" in repr(r)
    assert SECRET not in repr(spec())


async def test_services_without_a_manager_start_nothing_and_a_bad_manager_fails_at_construction() -> None:
    # Section 12: without a service manager no endpoint is invented, and the run is not failed for it.
    async with Agent(ref.Driver()) as agent:
        result = await agent.send("hi", services=[spec()]).result()
    assert result.services() == []
    with pytest.raises(ConfigError) as bad:
        Agent(ref.Driver(), service_manager=object())
    assert bad.value.option == "service_manager"


async def test_a_service_that_dies_before_ready_fails_the_run_before_launch_with_its_output() -> None:
    async with Agent(ref.Driver(), service_manager=LocalServices()) as agent:
        stream = agent.send("hi", services=[spec(command=[sys.executable, SERVICE, "--fail"])])
        events = [e async for e in stream.events()]
        with pytest.raises(ConfigError) as info:
            await stream.result()
    assert info.value.option == "services"
    assert "exited with code 3 before it was ready" in str(info.value)
    assert "cannot start, token was ***" in str(info.value) and SECRET not in str(info.value)
    assert [type(e).__name__ for e in events] == ["Done"]
    assert children() == []


async def test_a_service_that_never_gets_ready_is_stopped_and_reported() -> None:
    never = spec(ready_line="this line never comes", ready_timeout=0.5)
    async with Agent(ref.Driver(), service_manager=LocalServices()) as agent:
        with pytest.raises(ConfigError, match=r"was not ready within 0\.5 s"):
            await agent.send("hi", services=[never]).result()
    assert children() == []


async def test_ready_port_waits_for_the_port() -> None:
    manager = LocalServices()
    req = ServiceRequest(
        run_id="run_p",
        driver_type="reference",
        agent=Identity(),
        config=None,
        workspace=WorkspaceLease(path=""),
        desired=(spec(ready_line="", ready_port=True, labels={"group": "g1"}),),
    )
    (r,) = await manager.ensure(req)
    assert fetch(f"http://{r.endpoint}/") == hashlib.sha256(SECRET.encode()).hexdigest()
    assert r.env == {"API_URL": f"http://{r.endpoint}/"} and r.labels["group"] == "g1"
    await manager.release_by_labels({"group": "other"})
    assert manager.running() == ["run_p/api"]
    await manager.release_by_labels({"group": "g1"})
    assert manager.running() == [] and children() == []


class BrokenRelease:
    """A ServiceManager whose release fails: the failure must join the run's outcome."""

    def __init__(self) -> None:
        self.released: list[str] = []

    async def ensure(self, request: ServiceRequest) -> Sequence[ServiceRef]:
        return [ServiceRef(name=s.name, endpoint="mem://x") for s in request.desired]

    async def release_by_run(self, run_id: str) -> None:
        self.released.append(run_id)
        raise OSError("the service host went away")

    async def release_by_labels(self, labels: Mapping[str, str]) -> None:
        return None


async def test_release_errors_join_the_outcome_before_done() -> None:
    manager = BrokenRelease()
    async with Agent(ref.Driver(), service_manager=manager) as agent:
        stream = agent.send("hi", services=[ServiceSpec(name="cache")])
        events = [e async for e in stream.events()]
        with pytest.raises(RunError) as info:
            await stream.result()
    assert "the service host went away" in str(info.value)
    assert info.value.details["cleanup_errors"] and info.value.result is not None
    assert [s.name for s in info.value.result.services()] == ["cache"]
    done = events[-1]
    assert type(done).__name__ == "Done" and done.err is info.value  # type: ignore[attr-defined]
    assert manager.released == [info.value.result.run_id]
    failed = [e for e in events if isinstance(e, Notice) and e.data.get("phase") == "cleanup_failed"]
    assert failed
