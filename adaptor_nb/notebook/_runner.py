"""What an ``%%agent`` cell and an ``%agent`` line do once the input transformer has made them awaiting code."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import typing
from typing import Any

from .._credentials import missing_credentials
from .._views._frontend import front_end
from .._views._interpolate import interpolate
from ._args import OptionError, UseOptions, compared, parse_cell_line, parse_use, split_line
from ._attach import collect
from ._defaults import FIXES, acp_on_path, inspect_driver, make_driver
from ._help import CELL_HELP, DRIVER_NAMES, LINE_HELP
from ._kernel import kernel_problem
from ._session import NotebookSession, SetupError
from ._sigint import TerminalInterrupts
from ._tools import tools_report
from ._waiting import CANCEL_GRACE as CANCEL_GRACE
from ._waiting import TICK as TICK
from ._waiting import Interrupted, _short, _wait, one_sentence, partial_result, show
from ._worktrees import worktrees_command

_T = typing.TypeVar("_T")


def _shell() -> Any:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("%%agent runs inside IPython or Jupyter (load it with %load_ext adaptor_nb)")
    return shell


def session_of(shell: Any) -> NotebookSession:
    """The NotebookSession attached to ``shell`` (created on first use)."""
    session = getattr(shell, "_adaptor_nb_session", None)
    if session is None:
        session = NotebookSession()
        shell._adaptor_nb_session = session
    return session


def _expand(shell: Any, line: str) -> str:
    """Expand ``$name`` and ``{expr}`` in an option line, as IPython does for every magic."""
    from IPython.utils.text import DollarFormatter

    try:
        return str(DollarFormatter().vformat(line, args=[], kwargs=shell.user_ns))
    except Exception:
        return line


def show_live(view: Any, shell: Any) -> Any:
    """Display a live view; returns the handle whose ``update(final)`` writes the finished run."""
    from ._companion import LiveOutputs, split_outputs

    if split_outputs(shell):
        import IPython.display

        return LiveOutputs(view, IPython.display.display)
    return show_updatable(view)


def show_updatable(obj: Any) -> Any:
    """Display ``obj`` with a display id; returns the handle that updates that same output later."""
    import IPython.display

    display: Any = IPython.display.display
    return display(obj, display_id=True)


def _usage_error(message: str) -> BaseException:
    from IPython.core.error import UsageError

    return UsageError(message)


def resolve_schema(expr: str, namespace: dict[str, Any]) -> Any:
    """Evaluate ``--schema`` in the notebook namespace: a model, a type such as ``list[Model]``, or a dict."""
    try:
        value = eval(expr, namespace)
    except Exception as exc:
        raise OptionError(f"%%agent: --schema {expr}: {type(exc).__name__}: {exc}") from None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise OptionError(f"%%agent: --schema {expr} is a string that is not a JSON Schema") from None
    check_schema(expr, value)
    return value


_SCHEMA_KINDS = "a pydantic model, a type such as list[Model], or a JSON-Schema dict"


def check_schema(expr: str, value: Any) -> None:
    """Refuse a ``--schema`` value that cannot become a JSON Schema, in one plain sentence (before any run starts)."""
    if value is None or isinstance(value, bool | int | float | bytes | list | tuple | set):
        raise OptionError(f"%%agent: --schema {expr} is {repr(value)[:60]}, not a schema; it must be {_SCHEMA_KINDS}")
    from .._errors import InvalidOutputSchemaError
    from .._schema import resolve_schema as build_schema

    try:
        build_schema(value)
    except InvalidOutputSchemaError as exc:
        cause = exc.__context__
        if isinstance(value, dict):
            where = getattr(cause, "json_path", "$")
            why = str(getattr(cause, "message", "") or cause or exc).splitlines()[0]
            raise OptionError(f"%%agent: --schema {expr} is not a valid JSON Schema: at {where}, {why}") from None
        raise OptionError(
            f"%%agent: --schema {expr} ({type(value).__name__}) cannot be turned into a JSON Schema; "
            f"it must be {_SCHEMA_KINDS}"
        ) from None


def is_table_schema(schema: Any) -> bool:
    """True for list-of-model schemas (their value goes into a DataFrame)."""
    origin = typing.get_origin(schema)
    if origin in (list, tuple):
        args = typing.get_args(schema)
        return bool(args) and isinstance(args[0], type) and hasattr(args[0], "model_validate")
    if isinstance(schema, dict):
        items = schema.get("items")
        return schema.get("type") == "array" and isinstance(items, dict) and items.get("type") == "object"
    return False


class QuietView:
    """What ``--quiet`` runs with instead of a view: no widget, no comm, no per-event work; just the Done."""

    async def consume(self, stream: Any) -> Any:
        """Wait for the run's end and return its Done event."""
        return await stream.done_event()

    def close_updates(self) -> None:
        """Nothing to stop."""


async def run_cell(line: str, body: str) -> None:
    """Run one ``%%agent`` cell: parse options, start the run, show the view, bind ``--out``; returns None."""
    __tracebackhide__ = True
    shell = _shell()
    session = session_of(shell)
    problem = kernel_problem(shell)
    if problem:
        raise _usage_error(problem)
    namespace = shell.user_ns
    try:
        opts = parse_cell_line(_expand(shell, line))
        if opts.map is not None:
            from ._map import run_map

            return await run_map(session, opts, body, namespace, resolve_schema)
        prompt = interpolate(body, namespace).strip()
        if not prompt:
            raise OptionError("%%agent: the cell body is the prompt, and it is empty")
        schema = resolve_schema(opts.schema, namespace) if opts.schema else None
        if compared(opts):
            from ._compare import run_compare

            return await run_compare(session, opts, prompt, schema, namespace, shell)
        attached = collect(opts.attach, namespace) if opts.attach else None
        plan = await session.plan(opts, namespace)
    except (OptionError, SetupError) as exc:
        raise _usage_error(str(exc)) from None
    call = dict(plan.call)
    if attached is not None:
        prompt = attached.prompt(prompt)
        if attached.images:
            call["images"] = attached.images
    if schema is not None:
        call["schema"] = schema
    fresh = await session.new_thread_notice(plan)  # before the run starts, which makes the thread
    stream = plan.runner.send(prompt, **call)
    view: Any
    handle = None
    if opts.quiet:
        view = QuietView()
    else:
        from .._views._view import RunView

        view = RunView(
            driver=plan.driver, model=plan.model, thread=plan.thread, note=plan.note, approval_note=plan.approval_note
        )
        view.attach(stream)
        if fresh is not None:
            view.apply(fresh)
        if front_end(shell):
            handle = show_live(view, shell)
    run_id = session.started(stream, view, plan)
    status = "failed"
    done: Any = None
    interrupts = TerminalInterrupts(shell)
    try:
        with interrupts:
            done = await _wait(view, stream)
        status = "done" if done.err is None else "failed"
    except Interrupted as stop:
        status, done = "cancelled", stop.done
        namespace[opts.out] = partial_result(stop.done)
        await interrupts.settle(stream)
        raise _short(
            KeyboardInterrupt(f"the %%agent run was interrupted; the partial Result is in {opts.out}")
        ) from None
    finally:
        view.close_updates()
        if handle is not None:
            handle.update(view.final_display())
        elif not opts.quiet:
            show(view.final_display())
        session.ended(run_id, status, getattr(done, "result", None))
    if done.err is not None:
        namespace[opts.out] = partial_result(done)
        if opts.no_raise or session.config.no_raise:
            print(f"{one_sentence(done.err)} (not raised: --no-raise; the partial Result is in {opts.out})")
            return None
        raise _short(done.err, f"the partial Result is in {opts.out}") from None
    result = done.result
    if schema is None:
        namespace[opts.out] = result
        return None
    value = result.decode(schema)
    if is_table_schema(schema):
        from .._frames import records_frame

        value = records_frame(value)
    namespace[opts.out] = value
    namespace[f"{opts.out}_result"] = result
    return None


async def run_line(line: str) -> None:
    """Run one ``%agent`` line (``use``, ``threads``, ``status``, ``cancel``, ``help``)."""
    __tracebackhide__ = True
    shell = _shell()
    session = session_of(shell)
    try:
        words = split_line(_expand(shell, line))
        command = words[0] if words else "help"
        if command == "threads":
            await show_threads(session)
            return None
        if command == "use":
            opts = parse_use(words[1:])
            await check_use(opts)
            apply_use(session, opts)
            return None
        if command == "status":
            print(await status_report(session))
            return None
        line_command(session, words)
    except (OptionError, SetupError) as exc:
        raise _usage_error(str(exc)) from None
    return None


def line_command(session: NotebookSession, words: list[str]) -> None:
    """The synchronous ``%agent`` subcommands."""
    command = words[0] if words else "help"
    if command == "use":
        opts = parse_use(words[1:])
        _off_loop(check_use(opts))
        apply_use(session, opts)
    elif command == "status":
        print(_off_loop(status_report(session)))
    elif command == "cancel":
        count = session.cancel_all()
        print(f"cancelled {count} run{'s' if count != 1 else ''}")
    elif command == "tools":
        print(tools_report(session))
    elif command == "help":
        print(LINE_HELP + "\n" + CELL_HELP)
    elif command == "skills":
        from ._skills import skills_report

        print(_off_loop(skills_report(dict(session.agents))))
    elif command == "doctor":
        from ._doctor import doctor_report

        print(_off_loop(doctor_report()))
    elif command == "threads":
        print("run %agent threads on its own line (it reads the thread store)")
    elif command == "worktrees":
        worktrees_command(session, words[1:])
    elif command == "store":
        from ._store import store_command

        print(store_command(session, words[1:]))
    elif command == "config":
        from ._config import config_command

        print(config_command(session.config, words[1:]))
    elif command == "record":
        from ._record import record_command

        print(record_command(words[1:]))
    elif command == "serve":
        from ..bridges.agui._notebook import serve_command

        print(serve_command(session, words[1:]))
    else:
        raise OptionError(f"%agent: unknown subcommand {command!r}; try %agent help")


def _off_loop(coro: typing.Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion on a loop of its own in a worker thread (the kernel's loop may be running)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def check_use(opts: UseOptions) -> None:
    """Refuse ``%agent use NAME`` when NAME's probe says it cannot run here, saying what to fix (unless --force)."""
    if opts.force or opts.driver in ("default", "reference"):
        return
    problem = ""
    if opts.driver in FIXES:
        with contextlib.suppress(Exception):  # a driver that cannot even be built is the probe's to explain
            problem = missing_credentials(opts.driver, make_driver(opts.driver))
    if problem:
        raise SetupError(
            f"%agent use {opts.driver}: the {opts.driver} driver cannot run here: {problem}"
            f" (or pin it anyway with %agent use {opts.driver} --force)"
        )
    outcome = await inspect_driver(opts.driver)
    if outcome.driver is not None:
        return
    fix = outcome.fix()
    raise SetupError(
        f"%agent use {opts.driver}: the {opts.driver} driver cannot run here: {outcome.why}"
        + (f"; to fix it, {fix}" if fix else "")
        + f" (or pin it anyway with %agent use {opts.driver} --force)"
    )


def apply_use(session: NotebookSession, opts: UseOptions) -> None:
    """Make ``opts`` the notebook's default for cells and say so."""
    session.use = opts
    session.choice = None
    if opts.driver == "default":
        print("%%agent cells use the automatic default driver (the first usable CLI driver, else reference)")
    else:
        print(f"%%agent cells use the {opts.driver} driver" + (f" with model {opts.model}" if opts.model else ""))


async def status_report(session: NotebookSession) -> str:
    """What ``%agent status`` prints: every installed driver's probe, then the notebook's state."""
    names = (*DRIVER_NAMES, *acp_on_path())
    outcomes = await asyncio.gather(*(inspect_driver(name) for name in names))
    lines = ["drivers:"]
    for outcome in outcomes:
        lines.append(f"  {outcome.summary()}")
        fix = outcome.fix()
        if fix:
            lines.append(f"    to use it: {fix}")
    from ._stable import stable_status

    return stable_status("\n".join([*lines, status_text(session)]))


def status_text(session: NotebookSession) -> str:
    """What ``%agent status`` prints."""
    lines = []
    if session.use is not None and session.use.driver != "default":
        lines.append(f"default driver: {session.use.driver} (set with %agent use)")
    elif session.choice is not None:
        lines.append(f"default driver: {session.choice.name} (automatic)")
        for name, why in session.choice.skipped.items():
            lines.append(f"  {name} skipped: {why}")
    else:
        lines.append("default driver: chosen at the first %%agent cell (the first usable CLI driver, else reference)")
    if session.choice is not None and session.choice.note:
        lines.append(f"note: {session.choice.note}")
    lines.append(f"thread store: {session.store_note or 'not opened yet'}")
    if session.active:
        lines.append("runs in progress:")
        for run_id, run in session.active.items():
            where = f" thread {run.thread}" if run.thread else ""
            lines.append(f"  {run_id} on {run.driver}{where}")
    else:
        lines.append("no runs in progress")
    return "\n".join(lines)


async def show_threads(session: NotebookSession) -> None:
    """Display the thread table (a DataFrame when pandas is installed)."""
    session.store()
    from ._stable import stable_rows

    rows = stable_rows(await session.thread_rows())
    if not rows:
        print("no threads yet (start one with %%agent --thread KEY)")
        return
    try:
        import pandas
    except ImportError:
        header = list(rows[0])
        print("\t".join(header))
        for row in rows:
            print("\t".join(str(row[h]) for h in header))
        return
    show(pandas.DataFrame(rows))
