"""What ``RunContext.emit`` and ``emit_many`` take and give back: a run of text deltas held as their texts, and the
finished awaitable an emit returns when the event was published at once."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any, cast, overload

from .._events import EventMeta, TextDelta, text_delta

_set = object.__setattr__


class _Done:
    """An awaitable that is already finished: ``await`` on it returns None without suspending or allocating."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return cast(Generator[Any, None, None], _EXHAUSTED)

    def __repr__(self) -> str:
        return "DONE"


_EXHAUSTED = iter(())
DONE = _Done()


class TextDeltas(Sequence[TextDelta]):
    """Assistant text deltas of one message in order, held as their texts until someone reads them as events.

    ``ctx.emit_many(TextDeltas(texts, message_id, meta))`` publishes a block of text read together without building
    one event per text; indexing gives the ``TextDelta`` each stands for (``meta`` carries the provider source).
    """

    __slots__ = ("message_id", "meta", "texts")

    def __init__(self, texts: Sequence[str], message_id: str = "", meta: EventMeta | None = None) -> None:
        self.texts = texts
        self.message_id = message_id
        self.meta = meta

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> TextDelta: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TextDelta]: ...

    def __getitem__(self, index: int | slice) -> TextDelta | Sequence[TextDelta]:
        if isinstance(index, slice):
            return TextDeltas(self.texts[index], self.message_id, self.meta)
        ev = text_delta(self.texts[index], self.message_id)
        if self.meta is not None:
            _set(ev, "meta", self.meta)
        return ev

    def __repr__(self) -> str:
        return f"TextDeltas({list(self.texts)!r}, message_id={self.message_id!r})"
