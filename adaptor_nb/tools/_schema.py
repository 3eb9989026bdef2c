"""Schemas inferred from a function: the input from its parameters (type hints, ``Annotated`` text, docstring),
the output from its return annotation. pydantic builds the JSON Schema and validates both directions."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from ._docstring import parse_docstring

__all__ = ["Inferred", "infer"]


@dataclass(frozen=True)
class Inferred:
    """What a function tells about itself."""

    summary: str
    input_model: type[BaseModel] | None
    input_schema: dict[str, Any]
    output_adapter: TypeAdapter[Any] | None
    output_schema: dict[str, Any] | None


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def _describe(annotation: Any) -> tuple[Any, str]:
    """Split a plain-text description out of ``Annotated[T, "text", ...]``."""
    if get_origin(annotation) is Annotated:
        base, *extra = get_args(annotation)
        texts = [e for e in extra if isinstance(e, str)]
        others = [e for e in extra if not isinstance(e, str)]
        kept = Annotated[(base, *others)] if others else base
        return kept, " ".join(texts)
    return annotation, ""


def infer(fn: Callable[..., Any], name: str, *, inputs: bool = True, output: bool = True) -> Inferred:
    """Build the input model and schemas of ``fn`` (``inputs`` / ``output`` False: an explicit schema replaces
    that side); raises TypeError naming what cannot be described."""
    summary, docs = parse_docstring(inspect.getdoc(fn))
    try:
        hints = get_type_hints(fn, include_extras=True)
    except Exception as exc:
        raise TypeError(f"tool {name!r}: cannot read the type hints of {fn!r}: {exc}") from None
    model, schema = _inputs(fn, name, hints, docs) if inputs else (None, {})
    adapter, out_schema = _output(name, hints) if output else (None, None)
    return Inferred(summary, model, schema, adapter, out_schema)


def _inputs(
    fn: Callable[..., Any], name: str, hints: dict[str, Any], docs: dict[str, str]
) -> tuple[type[BaseModel], dict[str, Any]]:
    fields: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"tool {name!r}: *{p.name} / **{p.name} cannot be described as JSON arguments")
        if p.kind is p.POSITIONAL_ONLY:
            raise TypeError(f"tool {name!r}: positional-only parameter {p.name!r} cannot take a JSON argument")
        annotation, text = _describe(hints.get(p.name, Any))
        description = text or docs.get(p.name) or None
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (annotation, Field(default, description=description))
    try:
        model = create_model(f"{name}_args", __base__=_Args, **fields)
        schema = model.model_json_schema()
    except Exception as exc:
        raise TypeError(f"tool {name!r}: its parameters have no JSON Schema: {exc}") from None
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return model, schema


def _output(name: str, hints: dict[str, Any]) -> tuple[TypeAdapter[Any] | None, dict[str, Any] | None]:
    out = hints.get("return", inspect.Signature.empty)
    adapter: TypeAdapter[Any] | None = None
    out_schema: dict[str, Any] | None = None
    if out not in (inspect.Signature.empty, Any, None, type(None)):
        if get_origin(out) in (typing.Awaitable, typing.Coroutine):
            out = get_args(out)[-1]
        try:
            adapter = TypeAdapter(out)
            out_schema = adapter.json_schema()
        except Exception as exc:
            raise TypeError(f"tool {name!r}: its return annotation has no JSON Schema: {exc}") from None
    return adapter, out_schema
