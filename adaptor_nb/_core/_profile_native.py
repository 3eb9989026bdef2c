"""The agents, hooks and config profile-resource families, written where the CLI reads them in a private profile.

Agents become ``<agents_dir>/<name>.md`` files (frontmatter ``name``/``description``/``tools``/``model`` and the
prompt as body); hooks go under ``hooks_key`` of the settings file and config is merged into it (JSON or TOML by
the file's extension). The settings file as it was before the first write (seeded or cloned) is the base every
run's families are applied to, so a later run with other resources does not inherit an earlier run's.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tomllib
from collections.abc import Mapping
from typing import Any

from .._errors import ConfigError
from ..driver._profile import ProfileLayout
from ..profile._specs import AgentSpec, HookSpec

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def merge_config(base: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """``patch`` over ``base``: tables merge key by key, anything else replaces."""
    out = copy.deepcopy(dict(base))
    for key, value in patch.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = merge_config(old, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _toml_key(key: Any) -> str:
    if not isinstance(key, str):
        raise ConfigError(f"profile_resources config: key {key!r} is not a string", option="profile_resources.config")
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string (ASCII-escaped) is a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise ConfigError(f"profile_resources config: {value!r} has no TOML form", option="profile_resources.config")


def dump_toml(data: Mapping[str, Any]) -> str:
    """A TOML document for nested tables of strings, numbers, booleans and lists."""
    lines: list[str] = []

    def table(path: tuple[str, ...], node: Mapping[str, Any]) -> None:
        scalars = [(k, v) for k, v in node.items() if not isinstance(v, Mapping)]
        tables = [(k, v) for k, v in node.items() if isinstance(v, Mapping)]
        if path and (scalars or not tables):
            lines.append("[" + ".".join(path) + "]")
        for k, v in scalars:
            lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
        if scalars:
            lines.append("")
        for k, v in tables:
            table((*path, _toml_key(k)), v)

    table((), data)
    return "\n".join(lines).rstrip("\n") + "\n"


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    try:
        data = tomllib.loads(raw.decode()) if path.endswith(".toml") else json.loads(raw or b"{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"profile_resources: the profile's {os.path.basename(path)} cannot be read: {exc}",
            option="profile_resources.config",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"profile_resources: the profile's {os.path.basename(path)} is not a table",
            option="profile_resources.config",
        )
    return data


def _dump(path: str, data: Mapping[str, Any]) -> str:
    if path.endswith(".toml"):
        return dump_toml(data)
    try:
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"profile_resources config: {exc}", option="profile_resources.config") from None


def hooks_table(hooks: tuple[HookSpec, ...]) -> dict[str, list[dict[str, Any]]]:
    """Hooks in the Claude Code settings shape: event -> [{matcher, hooks: [{type: command, command}]}]."""
    out: dict[str, list[dict[str, Any]]] = {}
    for h in hooks:
        entry: dict[str, Any] = {"type": "command", "command": h.command}
        if h.timeout:
            entry["timeout"] = h.timeout
        groups = out.setdefault(h.event, [])
        for g in groups:
            if g.get("matcher", "") == h.matcher:
                g["hooks"].append(entry)
                break
        else:
            group: dict[str, Any] = {"hooks": [entry]}
            if h.matcher:
                group = {"matcher": h.matcher, **group}
            groups.append(group)
    return out


def agent_markdown(a: AgentSpec) -> str:
    """A subagent definition file: YAML frontmatter (JSON-quoted scalars) and the prompt."""
    head = [f"name: {json.dumps(a.name)}", f"description: {json.dumps(a.description)}"]
    if a.tools:
        head.append(f"tools: {json.dumps(', '.join(a.tools))}")
    if a.model:
        head.append(f"model: {json.dumps(a.model)}")
    return "---\n" + "\n".join(head) + "\n---\n\n" + a.prompt.strip() + "\n"


class NativeResources:
    """What one private profile holds of the agents/hooks/config families, and the base it was applied to."""

    def __init__(self, layout: ProfileLayout) -> None:
        self.layout = layout
        self._base: dict[str, Any] | None = None
        self._had_file = False
        self.agents: tuple[str, ...] = ()
        self.hooks: tuple[str, ...] = ()
        self.config: tuple[str, ...] = ()

    def apply(
        self,
        folder: str,
        agents: tuple[AgentSpec, ...] | None,
        hooks: tuple[HookSpec, ...] | None,
        config: Mapping[str, Any] | None,
    ) -> None:
        lay = self.layout
        if lay.agents_dir and (agents is not None or self.agents):
            self._write_agents(os.path.join(folder, lay.agents_dir), agents or ())
        if lay.config_file:
            self._write_settings(os.path.join(folder, lay.config_file), hooks, config)

    def _write_agents(self, target: str, agents: tuple[AgentSpec, ...]) -> None:
        wanted = {a.name: agent_markdown(a) for a in agents}
        for name in self.agents:
            if name not in wanted:
                try:
                    os.remove(os.path.join(target, f"{name}.md"))
                except FileNotFoundError:
                    pass
        if wanted:
            os.makedirs(target, exist_ok=True)
        for name, text in wanted.items():
            path = os.path.join(target, f"{name}.md")
            if _text(path) != text:
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
        self.agents = tuple(sorted(wanted))

    def _write_settings(self, path: str, hooks: tuple[HookSpec, ...] | None, config: Mapping[str, Any] | None) -> None:
        if self._base is None:
            found = _read(path)
            self._had_file = found is not None
            self._base = found or {}
        doc = merge_config(self._base, config) if config else copy.deepcopy(self._base)
        key = self.layout.hooks_key
        if key and hooks is not None:
            if hooks:
                doc[key] = hooks_table(hooks)
            else:
                doc.pop(key, None)
        self.config = tuple(sorted(config)) if config else ()
        self.hooks = tuple(f"{h.event}:{h.matcher or '*'}" for h in hooks or ()) if key else ()
        if doc == self._base and not self._had_file and not os.path.exists(path):
            return
        text = _dump(path, doc)
        if _text(path) != text:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)


def _text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
