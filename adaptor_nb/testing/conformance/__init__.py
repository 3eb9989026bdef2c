"""The public driver conformance suite: checks through Agent, Thread and Stream that a driver does what it declares.

Usage with the offline reference driver (no hooks needed; the suite scripts it for every check)::

    from adaptor_nb.drivers import reference
    from adaptor_nb.testing import run_driver_conformance

    async def test_reference_conforms():
        await run_driver_conformance(reference.Driver)

A driver that talks to a real CLI needs a model that behaves as each check asks. A factory with a required positional
parameter receives the check's :class:`ConformanceCase`; it returns a Driver, an awaitable of one, or an (async)
context manager that yields one and cleans up afterwards, typically a fake model server scripted from ``case.runs``::

    @contextlib.asynccontextmanager
    async def claude_for(case: ConformanceCase):
        async with FakeAnthropicServer() as server:
            for run in case.runs:
                server.enqueue(*replies_for(run, case.hold))   # translate the neutral script to server replies
            yield claude.Driver(claude.Config(env={"ANTHROPIC_BASE_URL": server.url, ...}))

    report = await run_driver_conformance(claude_for, agent_options={"model": "claude-fake-1"})

Each :class:`ModelRun` says, in provider-neutral terms, what the model does in one run (one ``send``) of the check:
optionally first raise a decision of kind ``approval`` (a tool that needs permission, a plan to review, or a question
with ``choices``), then answer ``reply`` (or the JSON value ``structured``), and answer ``follow_up`` on every later
turn of the same run (continuations with supplemental input). ``fail`` makes the model request fail (an HTTP 500) so
the run must end in a RunError. ``hold`` pauses the first turn mid-stream until the suite calls
``case.hold.release()``; the server may wait on ``case.hold`` like a ``threading.Event`` (its ``wait()`` reports the
arrival) or call ``case.hold.arrived()`` itself. The suite releases the hold right after admitting a message, except
for ``Timing.INTERRUPT``: then it keeps the turn held until the message is delivered or failed (at most half the
timeout), so the driver has to interrupt the held turn. ``prompt_for(case, index)`` makes the prompt of run
``index`` (the default asks for the reply in plain words; a hook may add directives its fake server understands).

Host-tool checks (``host_tool_*``, for drivers that declare ``Descriptor.host_tools``) run the Agent with
``tools=[...]``: ``host_calls`` lists the calls (tool name, arguments) the model makes in one step, as calls of the CLI
tools ``HOST_TOOL_PREFIX + name``; the model then answers ``reply`` only if the tool results in its next request
contain every text of ``host_expect`` (so the suite can see the results arrived).

The factory is also called once for the case named ``"descriptor"`` (no runs) to read the declared capabilities.
Every check gets a fresh driver, Agent and workspace directory, is bounded by ``timeout`` seconds, and never sleeps
to synchronise. Each check verifies one clause of the contract, named by family and number (``CLAUSES[name]``:
``descriptor.1``, ``capability.3``, ``event.1``, ...); ``checks=`` and ``skip=`` take names or clause ids, and every
``CheckResult`` carries its ``clause``. ``render_table(reports)`` writes the clause x driver table of several
reports as markdown and ``parse_table(text)`` reads its verdicts back. The suite returns a
:class:`ConformanceReport` and raises AssertionError listing the failures unless
``raise_on_failure=False``.
"""

from ._cases import ConformanceCase, Hold, ModelRun, default_prompt
from ._checks import CHECKS
from ._clauses import CLAUSES, FAMILIES, Clause
from ._host_tools import HOST_TOOL_PREFIX
from ._report import CheckResult, ConformanceReport
from ._runner import run_driver_conformance
from ._table import parse_table, render_table, replace_table, verdicts

__all__ = [
    "CHECKS",
    "CLAUSES",
    "FAMILIES",
    "HOST_TOOL_PREFIX",
    "CheckResult",
    "Clause",
    "ConformanceCase",
    "ConformanceReport",
    "Hold",
    "ModelRun",
    "default_prompt",
    "parse_table",
    "render_table",
    "replace_table",
    "run_driver_conformance",
    "verdicts",
]
