"""Inspector: what an Agent's driver and profile can tell without a model task (``agent.inspect()``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ._core._version_trim import below, trimmed, version_tuple
from .driver._optional import ModelDetector, StreamCapability, StreamSupport
from .driver._profile import (
    Availability,
    ConfigSchema,
    ConfigSchemaProbe,
    QuotaProbe,
    QuotaReport,
    SkillSnapshot,
)
from .driver._spi import (
    EnvironmentCheck,
    EnvironmentProbe,
    EnvironmentReport,
    EnvironmentStatus,
    ModelInfo,
    ModelLister,
)


def effective_messages(report: EnvironmentReport) -> EnvironmentReport:
    """The report with its message capability as runs will see it: trimmed below the known minimum version, kept
    (with a warning check) when the version is unknown."""
    caps = report.messages
    if caps is None or not caps.min_version:
        return report
    if below(report.version, caps.min_version):
        check = EnvironmentCheck(
            "messages", False, f"CLI {report.version} is older than {caps.min_version}: in-run delivery is trimmed"
        )
        return replace(report, messages=trimmed(caps), checks=(*report.checks, check))
    if version_tuple(report.version) is None:
        check = EnvironmentCheck("messages", False, "unknown CLI version: the declared message support is kept")
        return replace(report, checks=(*report.checks, check))
    return report


if TYPE_CHECKING:
    from ._core._engine import Engine


class Inspector:
    """Reports from the Agent's captured driver configuration; each says "unsupported" or "unavailable" when the
    driver cannot tell (never a guess), and none starts a model task.

    Example::

        report = await agent.inspect().environment()
        print(report.version, report.auth_source)
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def __repr__(self) -> str:
        return f"Inspector(driver={self._engine.descriptor.name!r})"

    async def environment(self) -> EnvironmentReport:
        """CLI found, version, auth source and the effective message capability."""
        driver, desc = self._engine.driver, self._engine.descriptor
        if isinstance(driver, EnvironmentProbe):
            return effective_messages(await driver.probe_environment())
        return EnvironmentReport(driver=desc.name, status=EnvironmentStatus.UNKNOWN, messages=desc.messages)

    async def models(self) -> list[ModelInfo]:
        """The models the CLI lists (an empty list when the driver cannot list them); the model the CLI's own
        configuration selects, when the driver can detect it, is marked ``default`` (and added when unlisted)."""
        driver = self._engine.driver
        models = await driver.list_models() if isinstance(driver, ModelLister) else []
        detected = await self.detected_model()
        if not detected:
            return models
        if not any(m.id == detected for m in models):
            return [ModelInfo(id=detected, name=detected, default=True), *models]
        return [replace(m, default=m.id == detected) for m in models]

    async def detected_model(self) -> str:
        """The model the CLI runs when no ``model=`` is given, read from its configuration ("" when unknown)."""
        driver = self._engine.driver
        if isinstance(driver, ModelDetector):
            return await driver.detect_model()
        return ""

    def stream_capability(self) -> StreamCapability:
        """The streaming fidelity the driver declares (all False when it declares none)."""
        driver = self._engine.driver
        if isinstance(driver, StreamSupport):
            return driver.stream_capability()
        return StreamCapability()

    async def quota(self) -> QuotaReport:
        driver, name = self._engine.driver, self._engine.descriptor.name
        if isinstance(driver, QuotaProbe):
            return await driver.probe_quota()
        return QuotaReport(driver=name, status=Availability.UNSUPPORTED, detail=f"driver {name!r} has no quota probe")

    async def config_schema(self) -> ConfigSchema:
        driver, name = self._engine.driver, self._engine.descriptor.name
        if isinstance(driver, ConfigSchemaProbe):
            return await driver.config_schema()
        return ConfigSchema(
            driver=name, status=Availability.UNSUPPORTED, detail=f"driver {name!r} publishes no config schema"
        )

    async def skills(self) -> SkillSnapshot:
        """Requested, materialized, catalogued and externally installed skills of the Agent's profile."""
        return self._engine.profile.skills(self._engine.settings.run)
