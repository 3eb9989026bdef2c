"""``tool.reject``: the one failure a tool raises on purpose, shown to the model as the tool's error result."""

from __future__ import annotations

__all__ = ["ToolRejection", "as_rejection", "reject"]

_MINT = object()


class ToolRejection(Exception):
    """An expected, model-visible failure of a tool call. Create it with :func:`reject`, then ``raise`` it."""

    def __init__(self, message: str, *, _mint: object = None) -> None:
        super().__init__(message)
        self.message = message
        self._minted = _mint is _MINT

    def __repr__(self) -> str:
        return f"tool.reject({self.message!r})"


def reject(message: str) -> ToolRejection:
    """The rejection to ``raise`` from a tool: ``raise tool.reject("no access to prod")``.

    The model receives ``message`` as the call's error result and the run goes on.
    """
    if not isinstance(message, str) or not message.strip():
        raise TypeError("tool.reject() needs a non-empty message for the model")
    return ToolRejection(message, _mint=_MINT)


def as_rejection(exc: BaseException | None) -> ToolRejection | None:
    """``exc`` when it is a rejection made by :func:`reject` (a hand-built ToolRejection does not count)."""
    if isinstance(exc, ToolRejection) and exc._minted:
        return exc
    return None
