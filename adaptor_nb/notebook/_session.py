"""Per-kernel notebook state: the default driver, the Agents cells use, the thread store and the runs in progress."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._credentials import missing_credentials
from ._args import CellOptions, UseOptions
from ._config import NotebookConfig
from ._defaults import OFFLINE_NOTE, DriverChoice, choose_default, make_driver
from ._pace import approval_pace, runner_policy, with_approval_timeout
from ._tools import ToolsError, agent_with_tools
from ._where import RUN_STORES, StorePlace, locate
from ._worktrees import notebook_manager, result_workspace, worktree_call

STORE_ENV = "ADAPTOR_NB_THREAD_STORE"
STORE_DIR = ".adaptor_nb"
STORE_SUFFIX = ".sqlite"
_IGNORE = "# Written by adaptor_nb for the notebooks in this folder: threads and demo-driver state.\n*\n"


class SetupError(Exception):
    """A cell cannot start: unknown names, a driver that is not available, a bad schema."""


def store_path(env: dict[str, str] | None = None, cwd: Path | None = None) -> Path:
    """Where a notebook's threads live when no kernel is involved: ``$ADAPTOR_NB_THREAD_STORE``, else
    ``.adaptor_nb/<notebook>.sqlite`` beside the notebook ``JPY_SESSION_NAME`` names, else
    ``.adaptor_nb/threads.sqlite`` in ``cwd`` (``_where.locate`` has the whole rule)."""
    return locate(env=dict(os.environ) if env is None else env, shell=None, cwd=cwd).path


def prepare_folder(store: Path) -> None:
    """Create the folder ``store`` lives in; a ``.adaptor_nb`` folder gets a ``.gitignore`` that keeps it out of
    version control. An explicit ``$ADAPTOR_NB_THREAD_STORE`` is the user's place: nothing is made there."""
    folder = store.parent
    if folder.parent.name == RUN_STORES:  # a headless run's store, in the temporary directory
        folder.mkdir(parents=True, exist_ok=True)
        return
    if folder.name != STORE_DIR:
        return
    folder.mkdir(parents=True, exist_ok=True)
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text(_IGNORE, encoding="utf-8")


def reference_state(store: Path) -> Path:
    """Where the demo driver keeps its sessions: beside the store, named after it."""
    return store.with_name(store.stem + "-reference")


@dataclass
class Plan:
    """What a cell runs on: the runner (Agent or Thread), call options and what the header shows."""

    runner: Any
    call: dict[str, Any]
    driver: str
    model: str = ""
    thread: str = ""
    note: str = ""
    approval_note: str = ""  # what an approval card says about its wait (see _pace)


@dataclass
class ActiveRun:
    """A run in progress, for ``%agent status`` and ``%agent cancel``."""

    stream: Any
    view: Any
    driver: str
    thread: str
    started: float = field(default_factory=time.time)


@dataclass
class ThreadSeen:
    """What this kernel saw of a thread (the store may know more)."""

    key: str
    driver: str
    status: str = ""
    last_run: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    workspace: str = ""


class NotebookSession:
    """The notebook's adaptor_nb state, one per IPython shell."""

    def __init__(self) -> None:
        self.use: UseOptions | None = None
        self.choice: DriverChoice | None = None
        self.agents: dict[str, Any] = {}
        self.active: dict[str, ActiveRun] = {}
        self.threads: dict[str, ThreadSeen] = {}
        self._store: Any = None
        self.store_note = ""
        self._choosing: asyncio.Lock | None = None
        self.active_tools: tuple[Any, ...] = ()  # the tools of the last --tools cell (%agent tools)
        self.kept: Path | None = None  # set by %agent store keep: threads persist here even in headless runs
        self.config = NotebookConfig()  # %agent config: defaults for every cell
        self._place: StorePlace | None = None

    # -- the thread store ------------------------------------------------------------------------------------

    def place(self) -> StorePlace:
        """Where this notebook's threads live (the one rule of ``_where.locate``), decided once per kernel."""
        if self._place is None or (self.kept is not None and self._place.how != "kept"):
            self._place = locate(self.kept)
        return self._place

    def store(self) -> Any:
        """The notebook's thread store (SQLite where ``place()`` says; memory if SQLite is unavailable)."""
        if self._store is None:
            place = self.place()
            try:
                from ..threadstore._sqlite import SQLiteStore

                prepare_folder(place.path)
                if place.how == "run":
                    from ._run_store import RunStore

                    self._store = RunStore(place.path)
                else:
                    self._store = SQLiteStore(place.path)
                self.store_note = place.note
            except (ImportError, AttributeError, OSError) as exc:
                from ..threadstore import MemoryStore

                self._store = MemoryStore()
                self.store_note = f"in memory (SQLite store unavailable: {exc})"
        return self._store

    # -- drivers and agents ----------------------------------------------------------------------------------

    async def default_choice(self) -> DriverChoice:
        """The driver cells use when they name none (``%agent use`` or the automatic choice)."""
        if self.use is not None and self.use.driver != "default":
            name = self.use.driver
            if self.choice is None or self.choice.name != name:
                self.choice = DriverChoice(name, self._build(name), OFFLINE_NOTE if name == "reference" else "")
            return self.choice
        if self.choice is None:
            if self._choosing is None:
                self._choosing = asyncio.Lock()
            async with self._choosing:
                if self.choice is None:
                    found = await choose_default()
                    if found.name == "reference":
                        found.driver = self._build("reference")
                    self.choice = found
        return self.choice

    def _build(self, name: str) -> Any:
        if name == "reference":
            # Keep the demo driver's sessions beside the store so threads resume after a kernel restart.
            from ..drivers.reference import Config, Driver

            store = self.place().path
            state = reference_state(store)
            try:
                prepare_folder(store)
                state.mkdir(parents=True, exist_ok=True)
            except OSError:
                return Driver()
            return Driver(Config(state_dir=str(state)))
        try:
            return make_driver(name)
        except ImportError as exc:
            raise SetupError(f"the {name} driver is not available in this installation ({exc})") from None

    def agent_for(self, name: str, driver: Any | None = None, *, check: bool = True) -> Any:
        """The notebook's Agent for driver ``name`` (created once, on the notebook's thread store); a driver with
        no credentials is refused before anything starts (``check=False``: pinned with ``--force``)."""
        agent = self.agents.get(name)
        if agent is None or agent.closed:
            from .._agent import Agent

            driver = driver if driver is not None else self._build(name)
            problem = missing_credentials(name, driver) if check else ""
            if problem:
                raise SetupError(f"%%agent: {problem}")
            agent = Agent(
                driver,
                thread_store=self.store(),
                workspace_manager=notebook_manager(self),
            )
            self.agents[name] = agent
        return agent

    async def plan(self, opts: CellOptions, namespace: dict[str, Any]) -> Plan:
        """Resolve a cell's options into a runner and call options."""
        note = ""
        if opts.agent is not None:
            agent = namespace.get(opts.agent)
            if agent is None:
                raise SetupError(f"--agent {opts.agent}: no variable named {opts.agent!r} in the notebook")
            if not callable(getattr(agent, "send", None)) or not callable(getattr(agent, "thread", None)):
                raise SetupError(f"--agent {opts.agent}: {type(agent).__name__} is not an adaptor_nb.Agent")
            descriptor = getattr(agent, "descriptor", None)
            driver = getattr(descriptor, "name", "") or type(agent).__name__
            if getattr(descriptor, "scripted", False):
                note = OFFLINE_NOTE
            problem = missing_credentials(driver, getattr(agent, "driver", None))
            if problem:
                raise SetupError(f"--agent {opts.agent}: {problem}")
        elif opts.driver is not None:
            driver = opts.driver
            agent = self.agent_for(driver)
            note = OFFLINE_NOTE if driver == "reference" else ""
        else:
            choice = await self.default_choice()
            driver = choice.name
            forced = self.use is not None and self.use.force and self.use.driver == driver
            agent = self.agent_for(driver, choice.driver, check=not forced)
            note = choice.note
        if opts.tools:
            try:
                agent = agent_with_tools(self, driver, agent, opts.tools, namespace)
            except ToolsError as exc:
                raise SetupError(str(exc)) from None
        use = self.use if opts.agent is None else None
        call: dict[str, Any] = {}
        model = opts.model or (use.model if use else None)
        if model:
            call["model"] = model
        timeout = opts.timeout or (use.timeout if use else None)
        if timeout:
            call["timeout"] = timeout
        instructions = opts.instructions if opts.instructions is not None else (use.instructions if use else None)
        if instructions:
            call["instructions"] = instructions
        if opts.spawn:
            call["spawn"] = True
        if opts.skills:
            from ._skills import skill_refs

            call["skills"] = skill_refs(opts.skills)
        if opts.worktree:
            worktree_call(agent, call)
        approvals = opts.approvals or (use.approvals if use else None)
        if approvals is not None:
            call["on_approval"] = approval_handler(approvals)
        pace = approval_pace(opts.approval_timeout, self.config.approval_timeout, _live(), runner_policy(agent))
        if pace.seconds is not None:
            call["policy"] = with_approval_timeout(runner_policy(agent), pace.seconds)
        if not model:
            settings = getattr(agent, "settings", None)
            model = getattr(getattr(settings, "run", None), "model", "") or ""
        runner = agent.thread(opts.thread) if opts.thread else agent
        return Plan(
            runner=runner,
            call=call,
            driver=driver,
            model=model,
            thread=opts.thread or "",
            note=note,
            approval_note=pace.note,
        )

    async def new_thread_notice(self, plan: Plan) -> Any:
        """A Notice for the view when ``--thread KEY`` names a thread its store does not have, so that a thread
        that starts fresh says so (and where it looked); None when the thread continues or the cell has none."""
        key = getattr(plan.runner, "key", "") if plan.thread else ""
        store = getattr(getattr(plan.runner, "agent", None), "store", None)
        if not key or store is None:
            return None
        try:
            if await store.resolve(key) is not None:
                return None
        except Exception:
            return None
        from .._enums import NoticeKind
        from .._events import Notice

        place = self.place() if store is self._store else None
        kind = NoticeKind.THREAD_CONTINUITY if place is not None and place.how == "run" else NoticeKind.LIFECYCLE
        # the same words wherever the store is, so a notebook's saved outputs compare under any runner
        where = "its thread store" if place is not None else "the Agent's thread store"
        text = f"new thread {key!r}: {where} has no earlier run of it, so it starts here (see %agent status)"
        return Notice(kind=kind.value, text=text, data={"thread": key, "store": place.how if place else "agent"})

    # -- bookkeeping -----------------------------------------------------------------------------------------

    def started(self, stream: Any, view: Any, plan: Plan) -> str:
        """Remember a run in progress."""
        run_id = str(getattr(stream, "run_id", id(stream)))
        self.active[run_id] = ActiveRun(stream, view, plan.driver, plan.thread)
        return run_id

    def ended(self, run_id: str, status: str, result: Any) -> None:
        """Forget a finished run and note what it did to its thread."""
        run = self.active.pop(run_id, None)
        if run is None or not run.thread:
            return
        seen = self.threads.get(run.thread) or ThreadSeen(run.thread, run.driver)
        seen.driver = run.driver
        seen.status = status
        seen.last_run = time.time()
        seen.workspace = result_workspace(result) or seen.workspace
        usage = getattr(result, "usage", None)
        if usage is not None:
            seen.input_tokens += usage.input_tokens
            seen.output_tokens += usage.output_tokens
            seen.cost_usd += usage.cost_usd
        self.threads[run.thread] = seen

    def cancel_all(self) -> int:
        """Cancel every run in progress; returns how many."""
        runs = list(self.active.values())
        for run in runs:
            run.stream.cancel()
        return len(runs)

    async def thread_rows(self) -> list[dict[str, Any]]:
        """One row per known thread: key, driver, status, last run, usage (store records merged with this kernel)."""
        rows: dict[str, dict[str, Any]] = {}
        stores = {id(self._store): self._store} if self._store is not None else {}
        for agent in self.agents.values():
            stores.setdefault(id(agent.store), agent.store)
        for store in stores.values():
            with contextlib.suppress(Exception):
                for record in await store.list():
                    usage = record.usage or {}
                    rows[record.key] = {
                        "key": record.key,
                        "driver": record.driver,
                        "status": record.last_status,
                        "runs": record.runs,
                        "last run": _when(record.updated_at),
                        "input tokens": int(usage.get("input_tokens", 0)),
                        "output tokens": int(usage.get("output_tokens", 0)),
                    }
        for seen in self.threads.values():
            row = rows.setdefault(
                seen.key,
                {
                    "key": seen.key,
                    "driver": seen.driver,
                    "status": seen.status,
                    "runs": None,
                    "last run": _when(seen.last_run),
                    "input tokens": seen.input_tokens,
                    "output tokens": seen.output_tokens,
                },
            )
            row["driver"] = row["driver"] or seen.driver
            row["worktree"] = seen.workspace
            if seen.status:
                row["status"] = seen.status
        for row in rows.values():
            row.setdefault("worktree", "")
        return sorted(rows.values(), key=lambda r: str(r["last run"]), reverse=True)

    async def aclose(self) -> None:
        """Cancel runs and close every Agent this notebook created (reaps their processes)."""
        self.cancel_all()
        agents, self.agents = list(self.agents.values()), {}
        for agent in agents:
            with contextlib.suppress(Exception):
                await agent.close()
        store, self._store = self._store, None
        closer = getattr(store, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                closer()


def _live() -> bool:
    """True when a front end shows this kernel's views (so a person can answer an approval card)."""
    from IPython import get_ipython

    from .._views._frontend import front_end

    return front_end(get_ipython())


def _when(epoch: float) -> str:
    if not epoch:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def approval_handler(mode: str) -> Any:
    """The ``on_approval`` option for ``--approvals``: None asks in the view, else approve or deny everything."""
    from .._approvals import approve_all, deny_all

    if mode == "ask":
        return None
    if mode == "auto":
        return approve_all()
    return deny_all("denied by --approvals deny")
