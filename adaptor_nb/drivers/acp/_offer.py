"""What an agent offers a new session, for the Inspector: its models and its session configuration (modes and
config options), read from ``session/new`` in a process started for that and closed at once (no prompt is sent).
"""

from __future__ import annotations

from typing import Any

from ...driver import ModelInfo


def models(session: dict[str, Any]) -> list[ModelInfo]:
    """The models of a ``session/new`` answer: its ``model`` config option (what a run's ``model=`` picks from),
    else its ``models`` list."""
    for option in session.get("configOptions") or []:
        if isinstance(option, dict) and option.get("id") == "model":
            current = option.get("currentValue")
            return [
                ModelInfo(id=str(c["value"]), name=str(c.get("name") or c["value"]), default=c["value"] == current)
                for c in option.get("options") or []
                if isinstance(c, dict) and c.get("value") is not None
            ]
    listed = session.get("models")
    if isinstance(listed, dict) and isinstance(listed.get("availableModels"), list):
        current = listed.get("currentModelId")
        return [
            ModelInfo(id=str(m["modelId"]), name=str(m.get("name") or m["modelId"]), default=m["modelId"] == current)
            for m in listed["availableModels"]
            if isinstance(m, dict) and m.get("modelId")
        ]
    return []


def session_schema(session: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema of the session's settings: ``mode`` (its available modes) and each config option, with the
    current value as ``default``."""
    properties: dict[str, Any] = {}
    modes = session.get("modes")
    if isinstance(modes, dict) and isinstance(modes.get("availableModes"), list):
        available = [m for m in modes["availableModes"] if isinstance(m, dict) and m.get("id")]
        properties["mode"] = {
            "title": "Session mode",
            "enum": [str(m["id"]) for m in available],
            "default": modes.get("currentModeId"),
            "x-choices": [_choice(m["id"], m) for m in available],
        }
    for option in session.get("configOptions") or []:
        if not isinstance(option, dict) or not option.get("id"):
            continue
        entry: dict[str, Any] = {
            "title": str(option.get("name") or option["id"]),
            "default": option.get("currentValue"),
        }
        if option.get("description"):
            entry["description"] = str(option["description"])
        if option.get("type") == "boolean":
            entry["type"] = "boolean"
        else:
            choices = [c for c in option.get("options") or [] if isinstance(c, dict) and "value" in c]
            entry["enum"] = [c["value"] for c in choices]
            entry["x-choices"] = [_choice(c["value"], c) for c in choices]
        properties[f"config.{option['id']}"] = entry
    return {"type": "object", "properties": properties}


def _choice(value: Any, raw: dict[str, Any]) -> dict[str, Any]:
    return {"value": value, "name": str(raw.get("name") or value), "description": str(raw.get("description") or "")}


__all__ = ["models", "session_schema"]
