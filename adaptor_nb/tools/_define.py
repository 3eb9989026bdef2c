"""``tool.define``: a Python function described for a model (name, description, schemas, revision, policy)."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, overload

import jsonschema
from pydantic import BaseModel, TypeAdapter

from ._schema import infer

__all__ = ["Tool", "define"]

# Providers accept [A-Za-z0-9_-]{1,64} as a tool name; the CLIs add mcp__<server>__ in front of ours.
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,47}$")


@dataclass(frozen=True, eq=False)
class Tool:
    """A function the Agent hosts for the model. Build it with :func:`define`; call it like the function."""

    fn: Callable[..., Any]
    name: str
    description: str
    revision: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    requires_approval: bool
    timeout: float | None
    is_async: bool
    _model: type[BaseModel] | None = field(repr=False)
    _output: TypeAdapter[Any] | None = field(repr=False)
    revision_given: bool = True
    """False when ``define`` was given no revision (it shows "1"): such a tool cannot be used by a Thread."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return (
            f"tool.Tool(name={self.name!r}, revision={self.revision!r}, requires_approval={self.requires_approval!r})"
        )

    def validate_args(self, args: Any) -> dict[str, Any]:
        """The keyword arguments for the function; raises ValueError with a message meant for the model."""
        if not isinstance(args, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(args).__name__}")
        if self._model is None:
            try:
                jsonschema.validate(args, self.input_schema)
            except jsonschema.ValidationError as exc:
                where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
                raise ValueError(f"invalid arguments at {where}: {exc.message}") from None
            return dict(args)
        from pydantic import ValidationError

        try:
            parsed = self._model.model_validate(args)
        except ValidationError as exc:
            parts = []
            for e in exc.errors(include_url=False, include_input=False):
                where = ".".join(str(p) for p in e.get("loc", ())) or "(root)"
                parts.append(f"{where}: {e.get('msg', 'invalid')}")
            raise ValueError("invalid arguments: " + "; ".join(parts)) from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

    def dump_result(self, value: Any) -> Any:
        """The JSON-ready value of a return value; raises ValueError when it fails the output schema."""
        if self._output is not None:
            from pydantic import ValidationError

            try:
                checked = self._output.validate_python(value)
            except ValidationError as exc:
                raise ValueError(
                    f"the return value does not match the output schema ({exc.error_count()} errors)"
                ) from None
            return self._output.dump_python(checked, mode="json")
        if self.output_schema is not None:
            try:
                jsonschema.validate(value, self.output_schema)
            except jsonschema.ValidationError as exc:
                raise ValueError(f"the return value does not match the output schema: {exc.message}") from None
        return TypeAdapter(Any).dump_python(value, mode="json")


def _check(name: Any, description: Any, revision: Any, timeout: Any, requires_approval: Any) -> None:
    if not isinstance(name, str) or not _NAME.match(name) or "__" in name:
        raise ValueError(
            f"tool name {name!r} must be 1-48 letters, digits, '_' or '-', start with a letter and hold no '__'"
        )
    if not isinstance(description, str):
        raise TypeError(f"tool {name!r}: description must be a str")
    if not isinstance(revision, str) or not revision.strip():
        raise ValueError(f"tool {name!r}: revision must be a non-empty str (bump it when the tool's meaning changes)")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not math.isfinite(timeout) or timeout <= 0
    ):
        raise ValueError(f"tool {name!r}: timeout must be a positive number of seconds or None, got {timeout!r}")
    if not isinstance(requires_approval, bool):
        raise TypeError(f"tool {name!r}: requires_approval must be True or False")


def _object_schema(name: str, schema: Any, what: str) -> dict[str, Any]:
    if not isinstance(schema, dict):
        raise TypeError(f"tool {name!r}: {what} must be a JSON Schema dict")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"tool {name!r}: {what} is not a valid JSON Schema: {exc.message}") from None
    return dict(schema)


def _build(
    fn: Callable[..., Any],
    *,
    name: str | None,
    description: str | None,
    revision: str | None,
    input_schema: dict[str, Any] | None,
    output_schema: dict[str, Any] | None,
    requires_approval: bool,
    timeout: float | None,
) -> Tool:
    if isinstance(fn, Tool):
        fn = fn.fn
    if not callable(fn):
        raise TypeError(f"tool.define() needs a callable, got {type(fn).__name__}")
    tool_name = name if name is not None else getattr(fn, "__name__", "")
    revision_given = revision is not None
    revision = revision if revision is not None else "1"
    _check(tool_name, description if description is not None else "", revision, timeout, requires_approval)
    inferred = infer(fn, tool_name, inputs=input_schema is None, output=output_schema is None)
    schema_in = inferred.input_schema
    model: type[BaseModel] | None = inferred.input_model
    if input_schema is not None:
        schema_in = _object_schema(tool_name, input_schema, "input_schema")
        if schema_in.get("type") != "object":
            raise ValueError(f'tool {tool_name!r}: input_schema must describe an object ("type": "object")')
        model = None
    schema_out = inferred.output_schema
    adapter = inferred.output_adapter
    if output_schema is not None:
        schema_out = _object_schema(tool_name, output_schema, "output_schema")
        adapter = None
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)
    return Tool(
        fn=fn,
        name=tool_name,
        description=description if description is not None else inferred.summary,
        revision=revision,
        input_schema=schema_in,
        output_schema=schema_out,
        requires_approval=requires_approval,
        timeout=None if timeout is None else float(timeout),
        is_async=is_async,
        _model=model,
        _output=adapter,
        revision_given=revision_given,
    )


@overload
def define(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    revision: str | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Tool: ...


@overload
def define(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    revision: str | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def define(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    revision: str | None = None,
    input_schema: dict[str, Any] | None = None,
    output_schema: dict[str, Any] | None = None,
    requires_approval: bool = False,
    timeout: float | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Describe ``fn`` as a tool (also ``@tool.define`` and ``@tool.define(name=...)``).

    The input schema comes from the parameters' type hints, with descriptions from ``Annotated[T, "text"]`` or the
    docstring (Google or NumPy style); the output schema from the return annotation. ``input_schema`` /
    ``output_schema`` override them. ``revision`` names the tool's meaning: change it when a Thread should notice.
    A Thread uses only tools given a revision; without one the tool serves one-off runs and shows revision "1".
    A sync function runs in a worker thread, an async one on the event loop; ``timeout`` bounds one call.
    """

    def wrap(f: Callable[..., Any]) -> Tool:
        return _build(
            f,
            name=name,
            description=description,
            revision=revision,
            input_schema=input_schema,
            output_schema=output_schema,
            requires_approval=requires_approval,
            timeout=timeout,
        )

    if fn is None:
        return wrap
    return wrap(fn)
