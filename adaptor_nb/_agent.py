"""Agent: one driver plus default options; starts runs and owns their processes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from ._core._background import BACKGROUND
from ._core._engine import Engine
from ._core._options import AgentOption, AgentOptions, AgentSettings, CallOption, SendOptions
from ._errors import AgentCloseError as AgentCloseError
from ._result import Result
from ._stream import Stream
from ._thread import Thread
from .driver._spi import (
    Descriptor,
    Driver,
    EnvironmentProbe,
    EnvironmentReport,
    EnvironmentStatus,
    ModelInfo,
    ModelLister,
)

if TYPE_CHECKING:
    from ._inspect import Inspector
    from .driver._profile import ProfileSnapshot, SkillSnapshot
    from .threadstore._protocol import Store


class Agent:
    """Runs prompts on one driver. ``send`` for one-off runs, ``thread(key)`` for named conversations.

    Example::

        async with Agent(reference.Driver(), model="demo") as agent:
            result = await agent.send("Say hello").result()
    """

    def __init__(self, driver: Driver, *extensions: AgentOption | CallOption, **options: Unpack[AgentOptions]) -> None:
        if driver is None:
            raise TypeError("Agent() needs a driver, e.g. Agent(adaptor_nb.drivers.reference.Driver())")
        for attr in ("descriptor", "validate_config", "run", "config_fingerprint"):
            if not callable(getattr(driver, attr, None)):
                raise TypeError(f"{type(driver).__name__} is not a Driver: it has no {attr}()")
        self._engine = Engine(driver, options, extensions)

    def __repr__(self) -> str:
        model = f", model={self.settings.run.model!r}" if self.settings.run.model else ""
        return f"Agent(driver={self.descriptor.name!r}{model})"

    # -- properties --------------------------------------------------------------------------------------

    @property
    def engine(self) -> Engine:
        """The runtime state below this handle (internal: threads and streams are built on it)."""
        return self._engine

    @property
    def driver(self) -> Driver:
        return self._engine.driver

    @property
    def descriptor(self) -> Descriptor:
        """The driver's declared capabilities."""
        return self._engine.descriptor

    @property
    def settings(self) -> AgentSettings:
        return self._engine.settings

    @property
    def store(self) -> Store:
        return self._engine.store

    @property
    def owner_id(self) -> str:
        return self._engine.owner_id

    @property
    def closed(self) -> bool:
        return self._engine.closed

    @property
    def active(self) -> list[Stream]:
        """Streams of runs still in progress."""
        return [Stream(ex) for ex in self._engine.running()]

    # -- runs --------------------------------------------------------------------------------------------

    def send(self, prompt: str, *extensions: CallOption, **options: Unpack[SendOptions]) -> Stream:
        """Start a one-off run (a fresh anonymous conversation) and return its Stream at once. Option objects
        (``CallOption``) apply after the keyword options, in order."""
        return Stream(self._engine.start(prompt, options, binding=None, where="send", extensions=extensions))

    def run_sync(self, prompt: str, *extensions: CallOption, **options: Unpack[SendOptions]) -> Result:
        """Run ``prompt`` to completion from synchronous code and return its Result (raises RunError like
        ``result()``). Calls share one background loop; see ``adaptor_nb.run_sync``."""
        result: Result = BACKGROUND.run(lambda: self.send(prompt, *extensions, **options).result(), "Agent.run_sync()")
        return result

    def thread(self, key: str, *, resume_only: bool = False) -> Thread:
        """The named thread ``key``: continues it if it exists (and is compatible), otherwise starts it."""
        return Thread(self, key, resume_only=resume_only)

    # -- inspection --------------------------------------------------------------------------------------

    async def environment(self) -> EnvironmentReport:
        """Probe the driver's CLI (found, version, auth) without starting a model task."""
        driver, desc = self._engine.driver, self._engine.descriptor
        if isinstance(driver, EnvironmentProbe):
            return await driver.probe_environment()
        return EnvironmentReport(driver=desc.name, status=EnvironmentStatus.UNKNOWN, messages=desc.messages)

    async def models(self) -> list[ModelInfo]:
        """Models the provider reports, where the driver can list them."""
        driver = self._engine.driver
        if isinstance(driver, ModelLister):
            return await driver.list_models()
        return []

    def inspect(self) -> Inspector:
        """Environment, models, quota, config schema and skills, from the captured driver configuration."""
        from ._inspect import Inspector

        return Inspector(self._engine)

    async def profile_state(self) -> ProfileSnapshot:
        """The profile's desired versus materialized resources (changes nothing)."""
        return self._engine.profile.snapshot(self._engine.settings.run)

    async def sync_profile(self) -> ProfileSnapshot:
        """Materialize the Agent's skills and profile resources now (as the next run would) and report."""
        return await self._engine.profile.sync(self._engine.settings.run)

    async def select_skills(self, keys: list[str]) -> SkillSnapshot:
        """Select skills by key for every later run of this Agent (in this process). Every key must resolve
        (through ``skill_provider=`` or a skill given earlier); otherwise the selection stays as it was."""
        return await self._engine.profile.select(keys, self._engine.settings.run)

    # -- shutdown ----------------------------------------------------------------------------------------

    async def close(self, timeout: float = 30.0) -> None:
        """Stop new runs, cancel and drain admitted work, reap every provider process. Idempotent."""
        await self._engine.close(timeout)

    async def __aenter__(self) -> Agent:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
