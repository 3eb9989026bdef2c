"""A deterministic example value for a JSON Schema (the reference driver's structured answers)."""

from __future__ import annotations

from typing import Any


def sample(schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A small value that satisfies common JSON Schemas (objects, arrays, enums, refs, scalars)."""
    root = root or schema
    if depth > 8:
        return None
    if "$ref" in schema:
        ref = str(schema["$ref"])
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return sample(node, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return sample(options[0], root, depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else None)
    if t == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties", {})
        return {name: sample(sub, root, depth + 1) for name, sub in props.items()}
    if t == "array":
        n = max(int(schema.get("minItems", 3)), 1)
        n = min(n, int(schema.get("maxItems", n)))
        item = schema.get("items", {})
        return [_vary(sample(item, root, depth + 1), i) for i in range(n)]
    if t == "string":
        return "example"
    if t == "integer":
        return int(schema.get("minimum", 1))
    if t == "number":
        return float(schema.get("minimum", 1.5))
    if t == "boolean":
        return True
    if t == "null":
        return None
    return "example"


def _vary(value: Any, i: int) -> Any:
    """Make list items differ a little so tables look like tables."""
    if isinstance(value, dict):
        return {k: _vary(v, i) for k, v in value.items()}
    if isinstance(value, str) and value == "example":
        return f"example {i + 1}"
    if isinstance(value, int) and not isinstance(value, bool):
        return value + i
    if isinstance(value, float):
        return value + i
    return value
