"""How a cell waits for its run and reports its end: the interrupt tick, the one-sentence error, the partial
Result (shared by the single-run cell and the side-by-side cells)."""

from __future__ import annotations

import asyncio
from typing import Any

from .._views._model import INTERRUPTED

TICK = 0.2
"""How often a blocked cell wakes up, so Kernel > Interrupt is seen within this many seconds."""


CANCEL_GRACE = 10.0


def one_sentence(err: BaseException) -> str:
    """``err`` as its type and one sentence: a run failure's message without its reason code repeated in front
    (``ApprovalDenied: denied by you``, not ``ApprovalDenied: approval_denied: denied by you``)."""
    from .._errors import RunError

    text = err.message if isinstance(err, RunError) and err.message else str(err)
    return f"{type(err).__name__}: {text}"


_SENTENCE_CLASSES: dict[Any, Any] = {}


def _sentence_class(cls: Any) -> Any:
    """A subclass of ``cls`` with the same name whose ``str()`` is the message alone (what error replies carry)."""
    known = _SENTENCE_CLASSES.get(cls)
    if known is not None:
        return known

    def __str__(self: Any) -> str:
        return str(self.message)

    names = {"__module__": cls.__module__, "__qualname__": cls.__qualname__}
    made = _SENTENCE_CLASSES[cls] = type(cls.__name__, (cls,), {"__str__": __str__, **names})
    return made


def _short(err: BaseException, hint: str = "") -> BaseException:
    """Make IPython show ``err`` as one line (the view above has the details), not the pipeline's frames."""
    from .._errors import RunError

    if isinstance(err, RunError) and err.message:
        err.__class__ = _sentence_class(type(err))  # still an instance of its class; says its message once
    name, _, text = one_sentence(err).partition(": ")
    lines = [f"\x1b[0;31m{name}\x1b[0m: {text}"]
    if hint:
        lines.append(hint)
    try:
        err._render_traceback_ = lambda: lines  # type: ignore[attr-defined]
    except AttributeError:
        pass
    return err


def show(obj: Any) -> None:
    """Display ``obj`` in the cell's output."""
    import IPython.display

    display: Any = IPython.display.display
    display(obj)


def interrupt(stream: Any) -> None:
    """Cancel the run, saying it was interrupted (so the view and the error say so, not "cancelled")."""
    execution = getattr(stream, "_ex", None)
    if execution is not None:
        execution.cancel(INTERRUPTED)
    else:
        stream.cancel()


class Interrupted(Exception):
    """Kernel > Interrupt stopped the run; ``done`` is its Done event (with the partial Result), if it ended."""

    def __init__(self, done: Any) -> None:
        super().__init__("the %%agent run was interrupted")
        self.done = done


async def _wait(view: Any, stream: Any) -> Any:
    """Consume the run into the view; on Kernel > Interrupt cancel it and raise Interrupted (with the run's end)."""
    consumer = asyncio.ensure_future(view.consume(stream))
    try:
        while not consumer.done():
            await asyncio.wait({consumer}, timeout=TICK)
    except (asyncio.CancelledError, KeyboardInterrupt):
        task = asyncio.current_task()
        if task is not None:
            while task.uncancel():
                pass
        interrupt(stream)
        done = None
        try:
            done = await asyncio.wait_for(asyncio.shield(consumer), CANCEL_GRACE)
        except BaseException:
            consumer.cancel()
        raise Interrupted(done) from None
    return consumer.result()


def partial_result(done: Any) -> Any:
    """The Result a run that ended early left (its error's, else the Done event's), or None."""
    if done is None:
        return None
    return getattr(getattr(done, "err", None), "result", None) or getattr(done, "result", None)
