"""Engine: the runtime state of one Agent (driver, settings, store, threads, process slots, live runs)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._enums import Timing
from .._errors import AdaptorError, AgentCloseError, ConfigError
from .._images import resolve_images
from .._policy import Author
from ..driver._optional import ProcessLifecycleDriver
from ..driver._spi import Descriptor, Driver
from ._background import BACKGROUND, STARTED
from ._binding import StandbyHandle, ThreadBinding, ThreadHost, ThreadState
from ._checks import check_construction
from ._hosting import check_tools, tool_revisions
from ._options import AgentSettings, agent_settings, apply_call_options, merge_run, split_call
from ._slots import ProcessSlots, describe_failure
from ._sync_text import outside_loop_message

if TYPE_CHECKING:
    from ..threadstore._protocol import Store
    from ._execution import Execution, RunHost
    from ._profile import ProfileManager


class Engine:
    """Everything an Agent's runs share; the public handles call down into it."""

    def __init__(self, driver: Driver, options: Mapping[str, Any], extensions: Sequence[Any] = ()) -> None:
        self.driver = driver
        self.options: dict[str, Any] = dict(options)  # as given: another Agent can be built like this one
        self.settings: AgentSettings = agent_settings(options, extensions)
        check_construction(self.settings)
        self.tools = check_tools(self.settings.tools, self.settings.run.mcp)
        self.tool_host: Any = None
        if self.tools:
            from ..tools._host import ToolHost

            self.tool_host = ToolHost(self.tools)
        self.descriptor: Descriptor = driver.descriptor()
        self._store: Store | None = self.settings.thread_store
        self.owner_id = f"agent-{os.urandom(6).hex()}"  # 12 random hex digits, as uuid4().hex[:12]
        # The profile manager (skills, private profile folders) and the run machinery load on first use; options
        # that need checking at construction build the manager now.
        self.closed = False
        self._profile: ProfileManager | None = None
        s = self.settings
        if s.profile is not None or s.skill_provider is not None or s.skill_materializer is not None:
            self._profile = self.profile
        self.threads: dict[str, ThreadState] = {}
        self.slots = ProcessSlots(self.owner_id)
        self.executions: set[Execution] = set()
        self._run_host: RunHost | None = None
        self.thread_host = ThreadHost(
            get_store=lambda: self.store,
            driver=driver,
            descriptor=self.descriptor,
            owner_id=self.owner_id,
            state=self.thread_state,
            profile_identity=self.profile.identity if self.settings.profile is not None else "",
            tools=tool_revisions(self.tools),
        )

    @property
    def store(self) -> Store:
        """The thread store: ``thread_store=``, or an in-memory store built on first use."""
        if self._store is None:
            from ..threadstore._memory import MemoryStore

            self._store = MemoryStore()
        return self._store

    @property
    def profile(self) -> ProfileManager:
        """The Agent's profile manager, built on first use."""
        if self._profile is None:
            from ._profile import ProfileManager

            self._profile = ProfileManager(self.driver, self.settings, self.owner_id)
            if self.closed:
                self._profile.close()  # built after close(): closed like the one close() would have closed
        return self._profile

    def run_host(self) -> RunHost:
        """What every execution of this Agent shares (built with the first run)."""
        if self._run_host is None:
            from ._execution import RunHost

            self._run_host = RunHost(
                driver=self.driver,
                descriptor=self.descriptor,
                agent_settings=self.settings,
                slots=self.slots,
                is_closed=lambda: self.closed,
                on_finished=self.executions.discard,
                profile=self.profile,
                tool_host=self.tool_host,
            )
        return self._run_host

    # -- threads -----------------------------------------------------------------------------------------

    def thread_state(self, key: str) -> ThreadState:
        st = self.threads.get(key)
        if st is None:
            st = self.threads[key] = ThreadState(key)
        return st

    def binding(
        self, key: str, *, resume_only: bool = False, fork_parent: str = "", standby: StandbyHandle | None = None
    ) -> ThreadBinding:
        return ThreadBinding(self.thread_host, key, resume_only=resume_only, fork_parent=fork_parent, standby=standby)

    # -- runs --------------------------------------------------------------------------------------------

    def start(
        self,
        prompt: str,
        options: Mapping[str, Any],
        *,
        binding: ThreadBinding | None,
        where: str,
        extensions: Sequence[Any] = (),
    ) -> Execution:
        """Check the call, merge its options over the Agent's and start the execution (needs a running loop)."""
        if not isinstance(prompt, str):
            raise TypeError(f"{where}() prompt must be a str, got {type(prompt).__name__}")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(outside_loop_message(where)) from None
        BACKGROUND.note(self)
        shared, call = split_call(options, where)
        config_error: AdaptorError | None = None
        settings = self.settings.run
        try:
            settings = merge_run(settings, shared)
            settings = apply_call_options(settings, extensions, where)
            when = call.get("when", Timing.SOON)
            if not isinstance(when, Timing):
                raise ConfigError(f"when must be a Timing, got {when!r}", option="when")
            author = call.get("author")
            if author is not None and not isinstance(author, Author):
                raise ConfigError(f"author must be an Author, got {author!r}", option="author")
            if "images" in call:  # read and typed now: a bad item fails before any process starts
                call["images"] = resolve_images(call["images"])
        except AdaptorError as exc:
            config_error = exc
        from ._execution import Execution

        ex = Execution(
            self.run_host(),
            settings,
            prompt,
            call,
            binding=binding,
            config_error=config_error,
            start_id=call.get("id"),
            start_author=call.get("author"),
        )
        self.executions.add(ex)
        started = STARTED.get()
        if started is not None:
            started.append(ex)  # inside a synchronous call: an interrupt of that call cancels this run
        return ex

    def running(self) -> list[Execution]:
        return [ex for ex in self.executions if not ex.finished]

    # -- shutdown ----------------------------------------------------------------------------------------

    async def close(self, timeout: float) -> None:
        """Stop new runs, cancel and drain admitted work, reap every provider process. Idempotent."""
        self.closed = True
        pending = self.running()
        for ex in pending:
            ex.cancel("the Agent was closed")
        for st in self.threads.values():
            if st.standby is not None:
                st.standby.cancel()
        if pending:
            await asyncio.wait([ex.task for ex in pending], timeout=timeout)
        failures = await self.slots.close_all(timeout)
        if self.tool_host is not None:
            try:
                await asyncio.wait_for(self.tool_host.close(), timeout)
            except Exception as exc:
                failures.append(f"the tool host: {describe_failure(exc, timeout)}")
        if self._profile is not None:  # a manager never built created nothing to remove
            failures += await asyncio.to_thread(self._profile.close)  # after the processes that used it are gone
        if isinstance(self.driver, ProcessLifecycleDriver):  # what it owns beyond the slots, after them
            try:
                await asyncio.wait_for(self.driver.aclose(), timeout)
            except Exception as exc:
                failures.append(f"the driver's aclose(): {describe_failure(exc, timeout)}")
        if failures:
            raise AgentCloseError(
                "Agent.close() left cleanup incomplete (call close() again to retry): " + "; ".join(failures),
                failures=failures,
            )
