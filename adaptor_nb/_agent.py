"""Agent: one driver plus default options; starts runs and owns their processes."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import TYPE_CHECKING, Any

from ._enums import Timing
from ._errors import AdaptorError, ConfigError
from ._options import AgentSettings, agent_settings, merge_run, split_call
from ._policy import Author
from ._stream import Stream
from ._thread import Thread, ThreadBinding, ThreadState
from .driver._spi import (
    Descriptor,
    Driver,
    EnvironmentProbe,
    EnvironmentReport,
    EnvironmentStatus,
    ModelInfo,
    ModelLister,
    ProcessSlot,
)

if TYPE_CHECKING:
    from ._run import Execution
    from .threadstore._protocol import Store


class Agent:
    """Runs prompts on one driver. ``send`` for one-off runs, ``thread(key)`` for named conversations.

    Example::

        async with Agent(reference.Driver(), model="demo") as agent:
            result = await agent.send("Say hello").result()
    """

    def __init__(self, driver: Driver, **options: Any) -> None:
        if driver is None:
            raise TypeError("Agent() needs a driver, e.g. Agent(adaptor_nb.drivers.reference.Driver())")
        for attr in ("descriptor", "validate_config", "run", "config_fingerprint"):
            if not callable(getattr(driver, attr, None)):
                raise TypeError(f"{type(driver).__name__} is not a Driver: it has no {attr}()")
        self._driver = driver
        self._settings: AgentSettings = agent_settings(options)
        self._descriptor: Descriptor = driver.descriptor()
        if self._settings.thread_store is None:
            from .threadstore._memory import MemoryStore

            self._store: Store = MemoryStore()
        else:
            self._store = self._settings.thread_store
        self._owner = f"agent-{uuid.uuid4().hex[:12]}"
        self._threads: dict[str, ThreadState] = {}
        self._slots: dict[str, ProcessSlot] = {}
        self._executions: set[Execution] = set()
        self._closed = False

    def __repr__(self) -> str:
        model = f", model={self._settings.run.model!r}" if self._settings.run.model else ""
        return f"Agent(driver={self._descriptor.name!r}{model})"

    # -- properties --------------------------------------------------------------------------------------

    @property
    def driver(self) -> Driver:
        return self._driver

    @property
    def descriptor(self) -> Descriptor:
        """The driver's declared capabilities."""
        return self._descriptor

    @property
    def settings(self) -> AgentSettings:
        return self._settings

    @property
    def store(self) -> Store:
        return self._store

    @property
    def owner_id(self) -> str:
        return self._owner

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def active(self) -> list[Stream]:
        """Streams of runs still in progress."""
        return [Stream(ex) for ex in self._executions if not ex.finished]

    # -- runs --------------------------------------------------------------------------------------------

    def send(self, prompt: str, **options: Any) -> Stream:
        """Start a one-off run (a fresh anonymous conversation) and return its Stream at once."""
        return self._start(prompt, options, binding=None, where="send")

    def thread(self, key: str, *, resume_only: bool = False) -> Thread:
        """The named thread ``key``: continues it if it exists (and is compatible), otherwise starts it."""
        return Thread(self, key, resume_only=resume_only)

    def _start(self, prompt: str, options: dict[str, Any], *, binding: ThreadBinding | None, where: str) -> Stream:
        from ._run import Execution

        if not isinstance(prompt, str):
            raise TypeError(f"{where}() prompt must be a str, got {type(prompt).__name__}")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{where}() needs a running event loop: call it from async code (a notebook cell can use await), "
                "or use adaptor_nb.run_sync(...) in a plain script"
            ) from None
        shared, call = split_call(options, where)
        config_error: AdaptorError | None = None
        settings = self._settings.run
        try:
            settings = merge_run(settings, shared)
            when = call.get("when", Timing.SOON)
            if not isinstance(when, Timing):
                raise ConfigError(f"when must be a Timing, got {when!r}", option="when")
            author = call.get("author")
            if author is not None and not isinstance(author, Author):
                raise ConfigError(f"author must be an Author, got {author!r}", option="author")
        except AdaptorError as exc:
            config_error = exc
        ex = Execution(
            self,
            settings,
            prompt,
            call,
            binding=binding,
            config_error=config_error,
            start_id=call.get("id"),
            start_author=call.get("author"),
        )
        self._executions.add(ex)
        return Stream(ex)

    def forget(self, ex: Execution) -> None:
        self._executions.discard(ex)

    # -- threads and processes ---------------------------------------------------------------------------

    def thread_state(self, key: str) -> ThreadState:
        st = self._threads.get(key)
        if st is None:
            st = self._threads[key] = ThreadState(key)
        return st

    def slot_for(self, key: str) -> ProcessSlot:
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = ProcessSlot(f"{self._owner}/{key}")
        return slot

    async def close_slot(self, key: str) -> None:
        slot = self._slots.pop(key, None)
        if slot is not None:
            await slot.close()

    # -- inspection --------------------------------------------------------------------------------------

    async def environment(self) -> EnvironmentReport:
        """Probe the driver's CLI (found, version, auth) without starting a model task."""
        if isinstance(self._driver, EnvironmentProbe):
            return await self._driver.probe_environment()
        return EnvironmentReport(
            driver=self._descriptor.name, status=EnvironmentStatus.UNKNOWN, messages=self._descriptor.messages
        )

    async def models(self) -> list[ModelInfo]:
        """Models the provider reports, where the driver can list them."""
        if isinstance(self._driver, ModelLister):
            return await self._driver.list_models()
        return []

    # -- shutdown ----------------------------------------------------------------------------------------

    async def close(self, timeout: float = 30.0) -> None:
        """Stop new runs, cancel and drain admitted work, reap every provider process. Idempotent."""
        self._closed = True
        pending = [ex for ex in self._executions if not ex.finished]
        for ex in pending:
            ex.cancel("the Agent was closed")
        for st in self._threads.values():
            if st.standby is not None:
                st.standby.cancel()
        if pending:
            await asyncio.wait([ex.task for ex in pending], timeout=timeout)
        slots, self._slots = list(self._slots.values()), {}
        for slot in slots:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(slot.close(), timeout)
        closer = getattr(self._driver, "aclose", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(closer(), timeout)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


from ._naming import publish as _publish  # noqa: E402

_publish(__name__, globals())
