"""The Agent's profile: the selected CLI profile folder, skill resolution and installation, profile resources.

Everything here runs before launch, so a bad skill or profile fails the run with a ``Skill*Error`` or a
ConfigError naming the option before any process starts.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field
from typing import Any

from .._errors import (
    ConfigError,
    SkillKeyConflictError,
    SkillMaterializationFailedError,
    SkillNotFoundError,
)
from ..driver._optional import SkillSupport
from ..driver._profile import (
    AgentProfile,
    ProfileAware,
    ProfileKind,
    ProfileLayout,
    ProfileSnapshot,
    ResourceSnapshot,
    SkillInfo,
    SkillSnapshot,
)
from ..driver._spi import Driver
from ..mcp import Server
from ..profile._resources import ResourceKind, ResourceMaterialization, Resources, ResourceSupport
from ..profile._selection import CloneFrom, CloneNative, Dedicated, Default, Native
from ..profile._specs import AgentSpec, HookSpec, as_agent, as_hook
from ..skill._materializer import SKILL_FILE, DefaultMaterializer, MaterializedSkill, Materializer
from ..skill._provider import Catalog, Provider
from ..skill._refs import FS, Archive, Dir, Inline, Key, Ref, Require, Source, as_ref
from ..skill._skillmd import parse as parse_skill_md
from ._options import AgentSettings, RunSettings
from ._profile_files import clone_into, installed_skills, remove_managed, write_managed
from ._profile_native import NativeResources

_SELECTIONS = (Default, Native, Dedicated, CloneNative, CloneFrom)


@dataclass(frozen=True)
class Prepared:
    """What a run gets from its profile: extra environment, extra instructions, the effective MCP set."""

    env: dict[str, str] = field(default_factory=dict)
    instructions: str = ""
    mcp: tuple[Server, ...] | None = None
    skills: tuple[str, ...] = ()


def check_profile_options(settings: AgentSettings, driver: Driver) -> None:
    """Construction-time checks of ``profile=``, ``skill_provider=`` and ``skill_materializer=``."""
    sel = settings.profile
    if sel is not None and not isinstance(sel, _SELECTIONS):
        raise ConfigError(
            f"profile= takes profile.Default/Native/Dedicated/CloneNative/CloneFrom, got {type(sel).__name__}",
            option="profile",
        )
    if isinstance(sel, Dedicated | CloneNative | CloneFrom | Native) and not isinstance(driver, ProfileAware):
        raise ConfigError(
            f"profile={type(sel).__name__}(...): driver {driver.name!r} declares no profile folder it could use",
            option="profile",
        )
    if isinstance(sel, CloneFrom) and not os.path.isdir(sel.source):
        raise ConfigError(f"profile.CloneFrom: {sel.source!r} is not a folder", option="profile")
    prov = settings.skill_provider
    if prov is not None and not isinstance(prov, Provider):
        raise ConfigError("skill_provider= needs an object with resolve(key)", option="skill_provider")
    mat = settings.skill_materializer
    if mat is not None and not isinstance(mat, Materializer):
        raise ConfigError(
            "skill_materializer= needs an object with materialize(ref, target)", option="skill_materializer"
        )


def _fingerprint(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=repr).encode()).hexdigest()[:24]


class ProfileManager:
    """One per Agent: owns the private profile folder, the skill staging folder and the installed skills."""

    def __init__(self, driver: Driver, settings: AgentSettings, owner_id: str) -> None:
        check_profile_options(settings, driver)
        self.driver = driver
        self.owner_id = owner_id
        self.selection = settings.profile if settings.profile is not None else Default()
        self.provider: Provider | None = settings.skill_provider
        self.materializer: Materializer = settings.skill_materializer or DefaultMaterializer()
        self.layout: ProfileLayout | None = driver.profile_layout() if isinstance(driver, ProfileAware) else None
        self.private = isinstance(self.selection, Dedicated | CloneNative | CloneFrom)
        self._dir = ""
        self._staging = ""
        self._materialized: dict[str, tuple[Source, MaterializedSkill]] = {}
        self._installed: dict[str, MaterializedSkill] = {}
        self._shared_written: list[str] = []
        self._selected: tuple[str, ...] = ()
        self._known: dict[str, Source] = {}
        self._last: tuple[str, ...] = ()
        self._lock = asyncio.Lock()
        self._closed = False
        self._native = NativeResources(self.layout) if self.layout is not None else None
        self._native_used = False

    # -- identity ----------------------------------------------------------------------------------------

    @property
    def identity(self) -> str:
        """Enters Thread compatibility: sessions do not move between profiles."""
        return str(getattr(self.selection, "identity", "default"))

    @property
    def kind(self) -> ProfileKind:
        return ProfileKind.HOST_MANAGED if self.private else ProfileKind.SHARED

    @property
    def directory(self) -> str:
        """The profile folder runs use ("" until a private one is created, or when the driver has none)."""
        if self.private:
            return self._dir
        if self.layout is None:
            return ""
        if isinstance(self.selection, Native):
            return self.layout.native_dir
        return self.layout.configured_dir

    @property
    def skills_native(self) -> bool:
        """Skills are installed in the profile's skills folder (else written into the instructions): where the
        layout has one, unless the driver's SkillSupport says its CLI does not read it."""
        if self.layout is None or not self.layout.skills_dir:
            return False
        return not isinstance(self.driver, SkillSupport) or self.driver.skill_support().native

    def skills_dir(self) -> str:
        d = self.directory
        return os.path.join(d, self.layout.skills_dir) if d and self.layout and self.layout.skills_dir else ""

    # -- preparing a run ---------------------------------------------------------------------------------

    async def prepare(self, run: RunSettings) -> Prepared:
        """Resolve and install the run's skills and the profile resources; Skill*Error / ConfigError on failure."""
        resources = run.profile_resources
        if resources is not None and not isinstance(resources, Resources):
            raise ConfigError(
                f"profile_resources must be a profile.Resources, got {type(resources).__name__}",
                option="profile_resources",
            )
        refs = [as_ref(s) for s in run.skills]
        families = self._families(resources)
        if resources is not None:
            refs += [as_ref(s) for s in resources.skills]
        wants = any(f is not None for f in families)
        async with self._lock:
            keys = {r.key for r in refs}
            refs += [Key(k) for k in self._selected if k not in keys]
            names: tuple[str, ...] = ()
            if (
                not refs
                and not wants
                and not self._native_used
                and (self._dir or not self.private)
                and not self._closed
            ):
                env, text = self._env(), ""  # nothing to write: no thread hop
            else:
                env, text, names = await asyncio.to_thread(self._prepare_sync, refs, families)
        mcp: tuple[Server, ...] | None = run.mcp
        if mcp is None and resources is not None and resources.mcp is not None:
            mcp = tuple(resources.mcp)
        instructions = text
        if resources is not None and resources.instructions:
            instructions = resources.instructions + ("\n\n" + text if text else "")
        return Prepared(env=env, instructions=instructions, mcp=mcp, skills=names)

    def _families(
        self, res: Resources | None
    ) -> tuple[tuple[AgentSpec, ...] | None, tuple[HookSpec, ...] | None, dict[str, Any] | None]:
        """The agents/hooks/config families checked against where this profile can put them (before launch)."""
        if res is None:
            return None, None, None
        agents = None if res.agents is None else tuple(as_agent(a) for a in res.agents)
        hooks = None if res.hooks is None else tuple(as_hook(h) for h in res.hooks)
        config = None if res.config is None else dict(res.config)
        for name, value in (("agents", agents), ("hooks", hooks), ("config", config)):
            if value:
                problem = self._family_problem(name)
                if problem:
                    raise ConfigError(f"profile_resources {name}=: {problem}", option=f"profile_resources.{name}")
        return agents, hooks, config

    def _family_problem(self, name: str) -> str:
        """Why the ``name`` family cannot land in this profile ("" when it can)."""
        lay = self.layout
        where = {"agents": lay.agents_dir, "hooks": lay.hooks_key, "config": lay.config_file} if lay else {}
        if not where.get(name):
            return f"driver {self.driver.name!r} declares no place its CLI reads {name} from (not materialized)"
        if not self.private:
            return (
                f"{name} are written only into a private profile (profile.Dedicated/CloneNative/CloneFrom); "
                "the shared profile is not changed"
            )
        return ""

    def _prepare_sync(
        self,
        refs: list[Ref],
        families: tuple[tuple[AgentSpec, ...] | None, tuple[HookSpec, ...] | None, dict[str, Any] | None] = (
            None,
            None,
            None,
        ),
    ) -> tuple[dict[str, str], str, tuple[str, ...]]:
        if self._closed:
            raise ConfigError("the Agent's profile was closed", option="profile")
        seen: dict[str, Ref] = {}
        for r in refs:
            if r.key in seen and seen[r.key] != r and not isinstance(r, Key | Require):
                raise SkillKeyConflictError(
                    f"skill key {r.key!r} names two different skills", option="skills", details={"skill": r.key}
                )
            if r.key not in seen or isinstance(seen[r.key], Key | Require):
                seen[r.key] = r
        self._ensure_dir()
        used = any(f is not None for f in families) or self._native_used
        if self._native is not None and self.private and self._dir and used:
            self._native.apply(self._dir, *families)
            self._native_used = True
        installed_now = set(installed_skills(self.skills_dir())) if self.skills_native else set()
        ready: list[MaterializedSkill] = []
        for r in seen.values():
            source = self._source(r, installed_now)
            if source is None:
                continue  # a Require met by a skill installed outside adaptor_nb
            ready.append(self._materialize(source))
        env = self._env()
        if self.skills_native:
            target = self.skills_dir()
            for m in ready:
                if self._installed.get(m.key) is m:
                    continue
                fresh = write_managed(target, m, self.owner_id)
                if fresh and not self.private:
                    self._shared_written.append(m.key)
                self._installed[m.key] = m
            text = ""
        else:
            text = "\n\n".join(_inject(m) for m in ready)
        self._last = tuple(m.key for m in ready)
        return env, text, self._last

    def _source(self, r: Ref, installed: set[str]) -> Source | None:
        if isinstance(r, Inline | Dir | FS | Archive):
            self._known[r.key] = r
            return r
        known = self._known.get(r.key)
        if known is not None:
            return known
        found = self.provider.resolve(r.key) if self.provider is not None else None
        if found is not None:
            if not isinstance(found, Inline | Dir | FS | Archive) or found.key != r.key:
                raise SkillMaterializationFailedError(
                    f"skill {r.key!r}: the provider returned {found!r}, not a skill source with that key",
                    option="skills",
                    details={"skill": r.key},
                )
            return found
        if isinstance(r, Require) and r.key in installed:
            return None
        where = "by the skill provider" if self.provider is not None else "(no skill_provider= is set)"
        extra = " or the profile's skills folder" if isinstance(r, Require) and self.skills_native else ""
        raise SkillNotFoundError(
            f"skill {r.key!r} was not found {where}{extra}", option="skills", details={"skill": r.key}
        )

    def _materialize(self, source: Source) -> MaterializedSkill:
        cached = self._materialized.get(source.key)
        if cached is not None and cached[0] == source and not isinstance(source, Dir | FS):
            return cached[1]
        if not self._staging:
            self._staging = tempfile.mkdtemp(prefix="adaptor_nb-skills-")
            weakref.finalize(self, shutil.rmtree, self._staging, True)
        target = os.path.join(self._staging, source.key)
        shutil.rmtree(target, ignore_errors=True)
        os.makedirs(target)
        try:
            m = self.materializer.materialize(source, target)
        except (SkillMaterializationFailedError, SkillNotFoundError) as exc:
            shutil.rmtree(target, ignore_errors=True)
            raise exc
        except Exception as exc:
            shutil.rmtree(target, ignore_errors=True)
            if isinstance(exc, ConfigError):
                raise
            raise SkillMaterializationFailedError(
                f"skill {source.key!r} could not be materialized: {type(exc).__name__}: {exc}",
                option="skills",
                details={"skill": source.key},
            ) from None
        if not os.path.isfile(os.path.join(m.path, SKILL_FILE)):
            raise SkillMaterializationFailedError(
                f"skill {source.key!r}: the materializer produced no {SKILL_FILE}",
                option="skills",
                details={"skill": source.key},
            )
        old = self._materialized.get(source.key)
        if old is not None and old[1].fingerprint == m.fingerprint:
            m = old[1]
        self._materialized[source.key] = (source, m)
        return m

    def _ensure_dir(self) -> None:
        if not self.private or self._dir or self.layout is None:
            return
        sel = self.selection
        root = getattr(sel, "root", "")
        if root:
            os.makedirs(root, exist_ok=True)
        if isinstance(sel, Dedicated) and root:
            # a named folder under root: reused by later Agents (with keep=True, sessions resume across kernels)
            self._dir = os.path.join(root, f"{self.layout.driver}-{sel.name}")
            os.makedirs(self._dir, exist_ok=True)
        else:
            self._dir = tempfile.mkdtemp(prefix=f"adaptor_nb-{self.layout.driver}-profile-", dir=root or None)
        if not getattr(sel, "keep", False):  # an Agent dropped without close() still leaves no folder behind
            weakref.finalize(self, shutil.rmtree, self._dir, True)
        for rel, text in self.layout.seed.items():
            path = os.path.join(self._dir, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        if isinstance(sel, CloneNative | CloneFrom):
            source = sel.source or self.layout.native_dir
            clone_into(self.layout, source, self._dir, sel)

    def _env(self) -> dict[str, str]:
        if self.layout is None:
            return {}
        d = self.directory
        if self.private or (isinstance(self.selection, Native) and d != self.layout.configured_dir):
            return {self.layout.env_var: d}
        return {}

    # -- inspection ----------------------------------------------------------------------------------------

    async def sync(self, run: RunSettings) -> ProfileSnapshot:
        await self.prepare(run)
        return self.snapshot(run)

    async def select(self, keys: list[str], run: RunSettings) -> SkillSnapshot:
        """Install ``keys`` as the process-local selection when every one resolves; unchanged otherwise."""
        if isinstance(keys, str) or not all(isinstance(k, str) for k in keys):
            raise TypeError("select_skills() takes a list of skill keys")
        previous = self._selected
        self._selected = tuple(dict.fromkeys(keys))
        try:
            await self.prepare(run)
        except BaseException:
            self._selected = previous
            raise
        return self.skills(run)

    def skills(self, run: RunSettings) -> SkillSnapshot:
        infos: dict[str, SkillInfo] = {}
        selected = set(self._selected)
        for key, (_, m) in self._materialized.items():
            infos[key] = SkillInfo(
                key=key,
                description=m.description,
                source=m.source,
                installed=key in self._installed,
                selected=key in selected,
                fingerprint=m.fingerprint,
            )
        for r in run.skills:
            k = r if isinstance(r, str) else r.key
            infos.setdefault(k, SkillInfo(key=k, source=type(r).__name__.lower() if not isinstance(r, str) else "key"))
        if isinstance(self.provider, Catalog):
            for entry in self.provider.catalog():
                infos.setdefault(entry.key, SkillInfo(key=entry.key, description=entry.description, source="catalog"))
        warnings: list[str] = []
        d = self.skills_dir()
        if self.skills_native and d:
            for key, desc in installed_skills(d).items():
                if key not in self._installed:
                    infos.setdefault(key, SkillInfo(key=key, description=desc, source="external", installed=True))
        elif not self.skills_native:
            warnings.append(f"driver {self.driver.name!r} reads no skills folder: skills are put into the prompt")
        return SkillSnapshot(
            driver=self.driver.name,
            materialization=self._skill_materialization(),
            skills=tuple(sorted(infos.values(), key=lambda i: i.key)),
            directory=d,
            warnings=tuple(warnings),
        )

    def _skill_materialization(self) -> ResourceMaterialization:
        if not self._materialized:
            return ResourceMaterialization.NOT_MATERIALIZED
        return ResourceMaterialization.NATIVE_MANAGED if self.skills_native else ResourceMaterialization.PROMPT_INJECTED

    def snapshot(self, run: RunSettings) -> ProfileSnapshot:
        res = run.profile_resources if isinstance(run.profile_resources, Resources) else None
        desired_skills = sorted(
            {(s if isinstance(s, str) else s.key) for s in (*run.skills, *(res.skills if res else ()))}
        )
        skill_snap = self.skills(run)
        external = tuple(i.key for i in skill_snap.skills if i.source == "external")
        missing = [k for k in desired_skills if k not in self._installed and k not in self._materialized]
        resources = [
            ResourceSnapshot(
                kind=ResourceKind.SKILLS,
                fingerprint=_fingerprint(sorted((k, m.fingerprint) for k, (_, m) in self._materialized.items())),
                managed=tuple(sorted(self._installed if self.skills_native else self._materialized)),
                external=external,
                support=ResourceSupport.PORTABLE_CORE if self.skills_native else ResourceSupport.FALLBACK,
                materialization=self._skill_materialization(),
                warnings=tuple(f"skill {k!r} is wanted but not materialized yet" for k in missing),
            )
        ]
        mcp = run.mcp if run.mcp is not None else (res.mcp if res else None)
        resources.append(
            ResourceSnapshot(
                kind=ResourceKind.MCP,
                fingerprint=_fingerprint([repr(m) for m in mcp]) if mcp is not None else "",
                managed=tuple(getattr(m, "name", "") for m in (mcp or ())),
                support=ResourceSupport.PORTABLE_CORE,
                materialization=(
                    ResourceMaterialization.NATIVE_MANAGED if mcp else ResourceMaterialization.NOT_MATERIALIZED
                ),
            )
        )
        instr = res.instructions if res else None
        resources.append(
            ResourceSnapshot(
                kind=ResourceKind.INSTRUCTIONS,
                fingerprint=_fingerprint(instr) if instr else "",
                support=ResourceSupport.FALLBACK,
                materialization=(
                    ResourceMaterialization.PROMPT_INJECTED if instr else ResourceMaterialization.NOT_MATERIALIZED
                ),
            )
        )
        resources += self._native_snapshots(res)
        warnings = [w for r in resources for w in r.warnings]
        if self.private and not self._dir:
            warnings.append("the private profile folder is created before the first run (or by sync_profile())")
        return ProfileSnapshot(
            driver=self.driver.name,
            profile=AgentProfile(
                identity=self.identity,
                directory=self.directory,
                env_var=self.layout.env_var if self.layout else "",
                keep=bool(getattr(self.selection, "keep", False)),
            ),
            kind=self.kind,
            fingerprint=_fingerprint([self.identity, [(r.kind.value, r.fingerprint) for r in resources]]),
            resources=tuple(resources),
            warnings=tuple(warnings),
            materialized=not missing and (bool(self._dir) or not self.private),
        )

    def _native_snapshots(self, res: Resources | None) -> list[ResourceSnapshot]:
        out: list[ResourceSnapshot] = []
        written = self._native
        for kind, support in (
            (ResourceKind.AGENTS, ResourceSupport.PORTABLE_EXTENDED),
            (ResourceKind.HOOKS, ResourceSupport.PORTABLE_EXTENDED),
            (ResourceKind.CONFIG, ResourceSupport.NATIVE_ESCAPE),
        ):
            name = kind.value
            desired = getattr(res, name) if res is not None else None
            problem = self._family_problem(name)
            managed: tuple[str, ...] = tuple(getattr(written, name)) if written is not None else ()
            missing = bool(desired) and not managed and not problem
            out.append(
                ResourceSnapshot(
                    kind=kind,
                    fingerprint=_fingerprint(desired) if desired else "",
                    managed=managed,
                    support=ResourceSupport.UNSUPPORTED if problem.startswith("driver") else support,
                    materialization=(
                        ResourceMaterialization.NATIVE_MANAGED if managed else ResourceMaterialization.NOT_MATERIALIZED
                    ),
                    warnings=(f"profile resource {name} are wanted but not materialized yet",) if missing else (),
                    error=problem if desired and problem else "",
                )
            )
        return out

    # -- shutdown ----------------------------------------------------------------------------------------

    def close(self) -> list[str]:
        """Remove what this Agent created (the private folder unless kept, its skills in a shared profile, the
        staging folder); returns descriptions of what could not be removed."""
        self._closed = True
        failures: list[str] = []
        if self._shared_written:
            failures += remove_managed(self.skills_dir(), self._shared_written, self.owner_id)
            self._shared_written = []
        keep = bool(getattr(self.selection, "keep", False))
        for path in ([self._dir] if self._dir and not keep else []) + ([self._staging] if self._staging else []):
            try:
                shutil.rmtree(path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                failures.append(f"could not remove {path!r}: {exc}")
        self._staging = ""
        if not keep:
            self._dir = ""
        return failures


def _inject(m: MaterializedSkill) -> str:
    """A skill as prompt text (for CLIs that read no skills folder)."""
    with open(os.path.join(m.path, SKILL_FILE), encoding="utf-8") as fh:
        _, body = parse_skill_md(fh.read())
    return f'<skill name="{m.key}" description="{m.description}">\n{body.strip()}\n</skill>'
