"""The generation options of schemas derived from Python types: inline references, relax strict objects, and
require only the fields marked as required."""

from __future__ import annotations

import copy
from typing import Any

from ._errors import InvalidOutputSchemaError

# A field marks itself required with ``Field(json_schema_extra={"required": True})``; the marker never reaches the
# provider (a boolean ``required`` inside a property is not valid JSON Schema).
REQUIRED_MARKER = "required"


def generated(
    body: dict[str, Any],
    *,
    inline_references: bool = False,
    allow_additional_properties: bool = False,
    require_explicit_tags: bool = False,
) -> dict[str, Any]:
    """``body`` (a schema derived from a Python type) with the generation options applied; a copy when any is."""
    body = copy.deepcopy(body)
    _objects(body, require_explicit_tags, allow_additional_properties)
    if inline_references:
        body = _inline(body)
    return body


def _objects(node: Any, explicit: bool, relax: bool) -> None:
    if isinstance(node, list):
        for item in node:
            _objects(item, explicit, relax)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        marked = [k for k, v in props.items() if isinstance(v, dict) and v.get(REQUIRED_MARKER) is True]
        for v in props.values():
            if isinstance(v, dict) and isinstance(v.get(REQUIRED_MARKER), bool):
                del v[REQUIRED_MARKER]
        if explicit:
            if marked:
                node["required"] = marked
            else:
                node.pop("required", None)
    if relax and node.get("additionalProperties") is False:
        del node["additionalProperties"]
    for key, value in node.items():
        if key != "required":
            _objects(value, explicit, relax)


def _inline(body: dict[str, Any]) -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = body.pop(key, None)
        if isinstance(found, dict):
            defs.update({f"#/{key}/{name}": value for name, value in found.items()})

    def resolve(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in defs:
            if ref in stack:
                raise InvalidOutputSchemaError(
                    f"schema_inline_references cannot inline the recursive type {ref.rsplit('/', 1)[-1]!r}; "
                    "drop the option for recursive types",
                    option="schema",
                )
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**resolve(copy.deepcopy(defs[ref]), (*stack, ref)), **resolve(rest, stack)}
        return {k: resolve(v, stack) for k, v in node.items()}

    result: dict[str, Any] = resolve(body, ())
    return result
