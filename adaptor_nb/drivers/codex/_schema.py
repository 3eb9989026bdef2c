"""The JSON Schema of Codex's configuration, as the CLI itself publishes it (no model task, no network).

``codex app-server generate-json-schema --out DIR`` writes the app-server protocol's schemas; the reply of
``config/read`` (``v2/ConfigReadResponse.json``) defines ``Config``, the shape of ``config.toml``. The schema handed
out is that definition made self-contained: ``Config`` at the root with every definition it refers to.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...driver import Availability, ConfigSchema, capture_output

_SOURCE = Path("v2") / "ConfigReadResponse.json"
_PREFIX = "#/definitions/"
_CACHE: dict[tuple[str, ...], ConfigSchema] = {}


def _key(argv: Sequence[str]) -> tuple[str, ...]:
    stamp = ""
    with contextlib.suppress(OSError):
        stamp = str(os.stat(argv[0]).st_mtime_ns)
    return (*argv, stamp)


def self_contained(document: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Definition ``name`` of ``document`` at the root, with the definitions it reaches (``#/definitions/...``)."""
    definitions: Mapping[str, Any] = document.get("definitions") or {}
    if name not in definitions:
        raise KeyError(name)
    wanted: dict[str, Any] = {}
    pending = [definitions[name]]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_PREFIX):
                target = ref[len(_PREFIX) :]
                if target not in wanted and target in definitions:
                    wanted[target] = definitions[target]
                    pending.append(definitions[target])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    root: dict[str, Any] = {"$schema": document.get("$schema", "http://json-schema.org/draft-07/schema#")}
    root.update({k: v for k, v in definitions[name].items() if k != "definitions"})
    root.setdefault("title", name)
    if wanted:
        root["definitions"] = wanted
    return root


async def read_config_schema(argv: Sequence[str], env: Mapping[str, str], *, timeout: float) -> ConfigSchema:
    """Ask the CLI for its config schema; "unavailable" with the reason when it cannot tell (never raises)."""
    key = _key(argv)
    known = _CACHE.get(key)
    if known is not None:
        return known
    with tempfile.TemporaryDirectory(prefix="adaptor_nb-codex-schema-") as out:
        try:
            said = await capture_output(
                [*argv, "app-server", "generate-json-schema", "--out", out], env, timeout=timeout, stderr=True
            )
        except (OSError, TimeoutError) as exc:
            why = str(exc) or f"no answer within {timeout:g} s"
            return ConfigSchema(driver="codex", status=Availability.UNAVAILABLE, detail=f"{type(exc).__name__}: {why}")
        source = Path(out) / _SOURCE
        try:
            schema = self_contained(json.loads(source.read_text(encoding="utf-8")), "Config")
        except (OSError, ValueError, KeyError) as exc:
            tail = said.strip()[-300:]
            detail = f"`codex app-server generate-json-schema` wrote no Config schema in {_SOURCE} ({exc!r})"
            return ConfigSchema(
                driver="codex", status=Availability.UNAVAILABLE, detail=f"{detail}: {tail}" if tail else detail
            )
    answer = ConfigSchema(
        driver="codex",
        status=Availability.AVAILABLE,
        schema=schema,
        detail="config.toml, as `codex app-server generate-json-schema` describes it (the Config of config/read)",
    )
    _CACHE[key] = answer
    return answer
