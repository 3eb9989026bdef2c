"""Structured output: turn a pydantic model, type or JSON-Schema dict into a schema, validate answers, decode."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ._errors import InvalidOutputSchemaError
from ._schema_gen import generated

WRAP_KEY = "items"


@dataclass(frozen=True)
class ResolvedSchema:
    """A request's output contract: the schema sent to the provider, and how to read the answer back."""

    schema: dict[str, Any]
    name: str
    description: str
    target: Any  # the pydantic model / type, or None for a plain dict schema
    return_invalid: bool = False
    wrapped: bool = False  # a non-object schema wrapped as {"items": ...} for providers that need an object

    def provider_schema(self) -> dict[str, Any]:
        if not self.wrapped:
            return self.schema
        inner = dict(self.schema)
        wrapper: dict[str, Any] = {
            "type": "object",
            "properties": {WRAP_KEY: inner},
            "required": [WRAP_KEY],
            "additionalProperties": False,
        }
        # References like "#/$defs/X" point at the document root, so the definitions move to the wrapper.
        for key in ("$defs", "definitions"):
            if key in inner:
                wrapper[key] = inner.pop(key)
        return wrapper

    def unwrap(self, value: Any) -> Any:
        if self.wrapped and isinstance(value, dict) and WRAP_KEY in value:
            return value[WRAP_KEY]
        return value


def resolve_schema(
    schema: Any,
    *,
    name: str | None = None,
    description: str | None = None,
    return_invalid: bool = False,
    inline_references: bool = False,
    allow_additional_properties: bool = False,
    require_explicit_tags: bool = False,
) -> ResolvedSchema:
    """Build the JSON Schema for ``schema``; raises InvalidOutputSchemaError naming the problem.

    The three generation options apply to schemas derived from a Python type (a pydantic model, a dataclass, a
    typed dict...), never to a JSON-Schema dict or JSON text, which the caller already owns (see ``_schema_gen``).
    """
    target: Any = None
    if isinstance(schema, dict):
        body = schema
    elif isinstance(schema, str | bytes):
        try:
            body = json.loads(schema)
        except ValueError as exc:
            raise InvalidOutputSchemaError(f"schema is not valid JSON: {exc}", option="schema") from None
        if not isinstance(body, dict):
            raise InvalidOutputSchemaError("schema JSON must be an object", option="schema")
    else:
        target = schema
        try:
            from pydantic import BaseModel, TypeAdapter

            if isinstance(schema, type) and issubclass(schema, BaseModel):
                body = schema.model_json_schema()
            else:
                body = TypeAdapter(schema).json_schema()
        except Exception as exc:
            raise InvalidOutputSchemaError(
                f"cannot derive a JSON schema from {schema!r}: {exc}", option="schema"
            ) from None
        body = generated(
            body,
            inline_references=inline_references,
            allow_additional_properties=allow_additional_properties,
            require_explicit_tags=require_explicit_tags,
        )
    try:
        from jsonschema.validators import validator_for

        validator_for(body).check_schema(body)
    except Exception as exc:
        raise InvalidOutputSchemaError(f"schema is not a valid JSON Schema: {exc}", option="schema") from None
    default_name = getattr(target, "__name__", None) or str(body.get("title") or "output")
    return ResolvedSchema(
        schema=body,
        name=name or default_name,
        description=description or str(body.get("description") or ""),
        target=target,
        return_invalid=return_invalid,
        wrapped=body.get("type") != "object",
    )


def validation_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """Every place where ``value`` breaks ``schema`` (empty when valid)."""
    from jsonschema.validators import validator_for

    validator = validator_for(schema)(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in validator.iter_errors(value)
    ]


def prompt_suffix(rs: ResolvedSchema) -> str:
    """Instructions appended to the prompt when the provider cannot enforce the schema itself."""
    return (
        "\n\nAnswer with exactly one JSON value that matches this JSON Schema, and nothing else: no prose, "
        f"no code fences.\nJSON Schema ({rs.name}):\n{json.dumps(rs.schema, separators=(',', ':'))}"
    )


# A fenced block without its language tag; it closes at a line that starts with ``` (or at the end of the text).
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:^[ \t]*```|\Z)", re.DOTALL | re.MULTILINE)
_INLINE_FENCE = re.compile(r"```(?:json)?([^\n`]+)```", re.IGNORECASE)  # ```json {"a": 1}``` on one line


def parse_json_text(text: str) -> Any:
    """Parse the JSON value of a model's answer: the whole text, else the first code fence that holds JSON.

    Plain JSON wins; otherwise each fenced block (```json, ``` or any language tag, prose around it allowed, an
    unclosed last fence read to the end, a one-line ```json {...}```) is tried in order. When nothing parses, raises
    the ``json.JSONDecodeError`` (a ``ValueError``) of the whole text. This is the one parser of JSON in model text:
    structured output, ``Result.decode`` and ``Result.to_pandas`` all read answers through it.
    """
    s = text.strip()
    try:
        return json.loads(s)
    except ValueError as exc:
        error = exc
    for block in (*_FENCE.findall(s), *_INLINE_FENCE.findall(s)):
        for candidate in (block, block.rstrip().removesuffix("```")):  # also ```json\n{...}``` closed on its line
            try:
                return json.loads(candidate)
            except ValueError:
                continue
    raise error


def decode_value(value: Any, tp: Any) -> Any:
    """Validate ``value`` into ``tp`` with pydantic (plain ``dict``/``list``/``Any`` pass through checks)."""
    from pydantic import BaseModel, TypeAdapter

    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.model_validate(value)
    return TypeAdapter(tp).validate_python(value)
