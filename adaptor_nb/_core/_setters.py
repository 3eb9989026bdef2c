"""The setters of RunSettings and AgentSettings (section 3.4), for packages that implement their own options.

The settings are frozen values: a setter returns the updated settings and leaves the receiver unchanged. Each run
setter merges exactly as the keyword option of the same name does (``set_model("")`` keeps the model,
``set_metadata`` merges by key, ``add_skills`` appends and refuses a conflicting duplicate key, ``set_mcp_servers([])``
clears, ...), because it goes through the same merge (``_options.merge_run``). An option object is any object with
``apply_run(settings) -> RunSettings`` (``CallOption``: accepted by every ``send``, and by ``Agent(...)`` as a
default) or ``apply_new(settings) -> AgentSettings`` (``AgentOption``: ``Agent(...)`` only).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self, cast

from .._errors import ConfigError
from .._policy import Identity, Policy

if TYPE_CHECKING:
    from .._schema import ResolvedSchema
    from ._options import RunSettings


def check_event_buffer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"event_buffer must be a positive int, got {value!r}", option="event_buffer")
    return value


def check_blocking_events(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"blocking_events must be a bool, got {value!r}", option="blocking_events")
    return value


class RunSetters:
    """The run setters; the settings class supplies ``_merged`` (one keyword option through the merge)."""

    output_schema: ResolvedSchema | None
    output_schema_error: BaseException | None

    def _merged(self, name: str, value: Any) -> Self:
        raise NotImplementedError

    def _with(self, **changes: Any) -> Self:
        new: Self = replace(cast(Any, self), **changes)
        return new

    def set_model(self, model: str) -> Self:
        """A non-empty model replaces the default (``model=``)."""
        return self._merged("model", model)

    def set_timeout(self, seconds: Any) -> Self:
        """The execution deadline in seconds or a timedelta; zero or None removes it (``timeout=``)."""
        return self._merged("timeout", seconds)

    def set_spawn(self, spawn: bool = True) -> Self:
        """Force a fresh provider process for the run (``spawn=True``)."""
        return self._merged("spawn", spawn)

    def set_instructions(self, instructions: str) -> Self:
        """Replace the extra instruction text (``instructions=``)."""
        return self._merged("instructions", instructions)

    def set_workspace(self, workspace: str) -> Self:
        """Replace the base working directory (``workspace=``)."""
        return self._merged("workspace", workspace)

    def set_workspace_spec(self, spec: Any) -> Self:
        """Replace the provisioning strategy (``workspace_spec=``)."""
        return self._merged("workspace_spec", spec)

    def set_metadata(self, key: str, value: str) -> Self:
        """Merge one key into the metadata, replacing the same key (``metadata=``)."""
        return self._merged("metadata", {key: value})

    def set_identity(self, identity: Identity) -> Self:
        """Replace the caller identity as a whole (``identity=``)."""
        return self._merged("identity", identity)

    def set_policy(self, policy: Policy) -> Self:
        """Replace the whole policy (``policy=``)."""
        return self._merged("policy", policy)

    def set_approval_handler(self, handler: Callable[..., Any] | None) -> Self:
        """Replace the approval handler; None restores event-form routing (``on_approval=``)."""
        return self._merged("on_approval", handler)

    def add_skills(self, *skills: Any) -> Self:
        """Append skills; a conflicting duplicate key fails, an identical one is kept once (``skills=``)."""
        return self._merged("skills", list(skills))

    def set_mcp_servers(self, servers: Sequence[Any]) -> Self:
        """Replace the whole MCP set; an empty list clears it (``mcp=``)."""
        return self._merged("mcp", list(servers))

    def set_services(self, services: Sequence[Any]) -> Self:
        """Replace the declarative services; an empty list clears them (``services=``)."""
        return self._merged("services", list(services))

    def add_run_service_provider(self, provider: Any) -> Self:
        """Append a run service provider, once (``run_services=``)."""
        return self._merged("run_services", [provider])

    def set_agents(self, agents: Sequence[Any]) -> Self:
        """Replace the profile's agent definitions (``profile_resources=Resources(agents=...)``)."""
        return self._resources(agents=agents)

    def set_hooks(self, hooks: Sequence[Any]) -> Self:
        """Replace the profile's hooks (``profile_resources=Resources(hooks=...)``)."""
        return self._resources(hooks=hooks)

    def set_config_patches(self, config: Mapping[str, Any]) -> Self:
        """Replace the profile's configuration patch (``profile_resources=Resources(config=...)``)."""
        return self._resources(config=config)

    def set_instructions_bundle(self, instructions: str) -> Self:
        """Replace the profile's instruction file (``profile_resources=Resources(instructions=...)``)."""
        return self._resources(instructions=instructions)

    def _resources(self, **family: Any) -> Self:
        from ..profile._resources import Resources

        return self._merged("profile_resources", Resources(**family))

    def set_output_schema(
        self,
        schema: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        return_invalid: bool = False,
        inline_references: bool = False,
        allow_additional_properties: bool = False,
        require_explicit_tags: bool = False,
    ) -> Self:
        """Ask the run for structured output (what ``schema=`` does). A schema that cannot be derived is kept as
        the output schema error, which ends the run before launch; the error is sticky: a later schema does not
        clear it."""
        from .._errors import InvalidOutputSchemaError
        from .._schema import resolve_schema

        try:
            resolved = resolve_schema(
                schema,
                name=name,
                description=description,
                return_invalid=return_invalid,
                inline_references=inline_references,
                allow_additional_properties=allow_additional_properties,
                require_explicit_tags=require_explicit_tags,
            )
        except InvalidOutputSchemaError as exc:
            return self.set_output_schema_error(exc)
        return self._with(output_schema=resolved)

    def set_output_schema_error(self, error: BaseException) -> Self:
        """Record a schema derivation error; the first one recorded stays (sticky)."""
        if not isinstance(error, BaseException):
            raise TypeError(f"set_output_schema_error needs an exception, got {error!r}")
        if self.output_schema_error is not None:
            return self
        return self._with(output_schema_error=error)


class AgentSetters:
    """The construction-only setters, and the run setters promoted onto the Agent's default RunSettings."""

    run: RunSettings

    def _with(self, **changes: Any) -> Self:
        new: Self = replace(cast(Any, self), **changes)
        return new

    def set_thread_store(self, store: Any) -> Self:
        return self._with(thread_store=store)

    def set_tools(self, tools: Sequence[Any]) -> Self:
        """Replace the whole tool set; an empty list clears it (``tools=``)."""
        return self._with(tools=tuple(tools))

    def set_event_buffer(self, size: int) -> Self:
        return self._with(event_buffer=check_event_buffer(size))

    def set_blocking_events(self, blocking: bool = True) -> Self:
        return self._with(blocking_events=check_blocking_events(blocking))

    def set_profile(self, profile: Any) -> Self:
        return self._with(profile=profile)

    def set_skill_provider(self, provider: Any) -> Self:
        return self._with(skill_provider=provider)

    def set_skill_materializer(self, materializer: Any) -> Self:
        return self._with(skill_materializer=materializer)

    def set_workspace_manager(self, manager: Any) -> Self:
        return self._with(workspace_manager=manager)

    def set_service_manager(self, manager: Any) -> Self:
        return self._with(service_manager=manager)

    # -- the run setters, promoted: they change the default RunSettings --------------------------------------

    def with_run(self, change: Callable[[RunSettings], RunSettings]) -> Self:
        """These settings with ``change`` applied to the default RunSettings."""
        return self._with(run=change(self.run))

    def set_model(self, model: str) -> Self:
        return self.with_run(lambda r: r.set_model(model))

    def set_timeout(self, seconds: Any) -> Self:
        return self.with_run(lambda r: r.set_timeout(seconds))

    def set_spawn(self, spawn: bool = True) -> Self:
        return self.with_run(lambda r: r.set_spawn(spawn))

    def set_instructions(self, instructions: str) -> Self:
        return self.with_run(lambda r: r.set_instructions(instructions))

    def set_workspace(self, workspace: str) -> Self:
        return self.with_run(lambda r: r.set_workspace(workspace))

    def set_workspace_spec(self, spec: Any) -> Self:
        return self.with_run(lambda r: r.set_workspace_spec(spec))

    def set_metadata(self, key: str, value: str) -> Self:
        return self.with_run(lambda r: r.set_metadata(key, value))

    def set_identity(self, identity: Identity) -> Self:
        return self.with_run(lambda r: r.set_identity(identity))

    def set_policy(self, policy: Policy) -> Self:
        return self.with_run(lambda r: r.set_policy(policy))

    def set_approval_handler(self, handler: Callable[..., Any] | None) -> Self:
        return self.with_run(lambda r: r.set_approval_handler(handler))

    def add_skills(self, *skills: Any) -> Self:
        return self.with_run(lambda r: r.add_skills(*skills))

    def set_mcp_servers(self, servers: Sequence[Any]) -> Self:
        return self.with_run(lambda r: r.set_mcp_servers(servers))

    def set_services(self, services: Sequence[Any]) -> Self:
        return self.with_run(lambda r: r.set_services(services))

    def add_run_service_provider(self, provider: Any) -> Self:
        return self.with_run(lambda r: r.add_run_service_provider(provider))
