"""``map_rows``: one agent run per DataFrame row, with a concurrency limit, retries, a cache and a cost stop."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import ConfigError, RunError
from .._views._frontend import in_kernel, kernel_front_end
from ._cache import cache_key, cache_path
from ._executor import Executor, InKernelExecutor, RowSettings
from ._progress import Progress
from ._render import render, row_namespace
from ._row import RowJob
from ._run import BatchRun, Runner
from ._store import with_thread_store
from ._workspace import check_workspace, is_spec

if TYPE_CHECKING:
    import pandas

    from .._agent import Agent
    from ..workspace._specs import WorkspaceSpec

ON_ERROR = ("keep", "raise")


class BatchFailed(RunError):
    """A row failed and ``on_error="raise"`` was asked; ``frame`` holds every row finished so far."""

    def __init__(self, message: str, frame: Any) -> None:
        super().__init__(message)
        self.frame = frame


def _check(
    df: Any,
    prompt: Any,
    schema: Any,
    concurrency: Any,
    retries: Any,
    timeout: Any,
    max_cost_usd: Any,
    on_error: Any,
    progress: Any,
) -> None:
    import pandas as pd
    from pydantic import BaseModel

    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"map_rows needs a pandas DataFrame, got {type(df).__name__}", option="df")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError("prompt must be a non-empty template string", option="prompt")
    if schema is not None and not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise ConfigError(f"schema must be a pydantic model class, got {schema!r}", option="schema")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a positive integer, got {concurrency!r}", option="concurrency")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ConfigError(f"retries must be a non-negative integer, got {retries!r}", option="retries")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        raise ConfigError(f"timeout must be positive seconds or None, got {timeout!r}", option="timeout")
    if max_cost_usd is not None and (
        isinstance(max_cost_usd, bool) or not isinstance(max_cost_usd, int | float) or max_cost_usd < 0
    ):
        raise ConfigError(
            f"max_cost_usd must be a non-negative number or None, got {max_cost_usd!r}", option="max_cost_usd"
        )
    if on_error not in ON_ERROR:
        raise ConfigError(f"on_error must be one of {ON_ERROR}, got {on_error!r}", option="on_error")
    if not any(progress is p or (isinstance(p, str) and progress == p) for p in PROGRESS):
        raise ConfigError(f"progress must be True, False, 'view' or 'terminal', got {progress!r}", option="progress")


def _resolve_runner(runner: Any) -> Runner:
    """An Agent is used as is; a factory is called once here (and on each remote worker)."""
    from .._agent import Agent

    if isinstance(runner, Agent):
        return Runner(runner, runner)
    if callable(runner):
        agent = runner()
        if not isinstance(agent, Agent):
            raise ConfigError(f"the runner factory returned {type(agent).__name__}, not an Agent", option="runner")
        return Runner(agent, runner, factory=runner, owned=True)
    raise ConfigError(f"runner must be an Agent or a zero-argument factory, got {runner!r}", option="runner")


def _check_credentials(agent: Agent) -> None:
    """Refuse an Agent whose driver has no credentials, naming what to set (the notebook's check, no process)."""
    from .._credentials import missing_credentials

    problem = missing_credentials(agent.descriptor.name, agent.driver)
    if problem:
        raise ConfigError(problem, option="runner")


class Batch:
    """A running ``map_rows`` batch: await it for the frame; ``cancel()`` stops admission and live runs.

    ``retry_failed()`` re-runs the failed rows (after the batch ended) and rebuilds ``frame``; ``view`` is the
    progress widget when the batch shows one.
    """

    def __init__(self, work: Callable[[Batch], Any], total: int) -> None:
        self.progress = Progress(total=total)
        self._work = work
        self._task: asyncio.Task[pandas.DataFrame] | None = None
        self._cancelled = asyncio.Event() if _loop_running() else None
        self.cancel_reason = ""
        self.frame: pandas.DataFrame | None = None
        self.view: Any = None
        self._retry: Callable[[], Any] | None = None
        self.on_frame: list[Callable[[pandas.DataFrame], None]] = []
        if _loop_running():
            self._start()

    def _start(self) -> asyncio.Task[pandas.DataFrame]:
        if self._task is None:
            if self._cancelled is None:
                self._cancelled = asyncio.Event()
            self._task = asyncio.ensure_future(self._work(self))
        return self._task

    @property
    def cancelled(self) -> bool:
        return self._cancelled is not None and self._cancelled.is_set()

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop admitting rows and cancel the live ones; the frame marks the rest ``skipped``."""
        self.cancel_reason = self.cancel_reason or f"cancelled ({reason})"
        if self._cancelled is None:
            self._cancelled = asyncio.Event()
        self._cancelled.set()

    async def wait_cancelled(self) -> None:
        assert self._cancelled is not None
        await self._cancelled.wait()

    def _rearm(self) -> None:
        """Forget an earlier cancel, so a retry admits rows again."""
        self._cancelled = asyncio.Event()
        self.cancel_reason = ""

    async def retry_failed(self) -> pandas.DataFrame:
        """Run the failed rows again (new runs, same settings), update ``frame`` in place of the old rows, return it.

        Call it once the batch has ended; the progress counts (and the view) follow the re-run.
        """
        if self._task is None or not self._task.done():
            raise RuntimeError("retry_failed() needs a finished batch: await it first")
        assert self._retry is not None
        frame: pandas.DataFrame = await self._retry()
        self.frame = frame
        for listener in list(self.on_frame):
            listener(frame)
        return frame

    def __await__(self) -> Generator[Any, None, pandas.DataFrame]:
        return self._result().__await__()

    async def _result(self) -> pandas.DataFrame:
        task = self._start()
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            # Kernel -> Interrupt cancels the awaiting cell: stop the batch, then hand back the partial frame.
            self.cancel("interrupted")
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise

    def __repr__(self) -> str:
        return f"<Batch {self.progress.summary()}>"

    def _repr_html_(self) -> str:
        return self.progress._repr_html_()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


PROGRESS = (True, False, "view", "terminal")


def map_rows(
    runner: Any,
    df: pandas.DataFrame,
    prompt: str,
    schema: Any = None,
    *,
    concurrency: int = 4,
    retries: int = 1,
    timeout: float | None = None,
    cache: str | Path | bool = False,
    thread: str | None = None,
    workspace: str | WorkspaceSpec | None = None,
    max_cost_usd: float | None = None,
    on_error: str = "keep",
    executor: Executor | None = None,
    progress: bool | str = True,
    backoff: float = 0.5,
    options: dict[str, Any] | None = None,
    approve_tools: tuple[str, ...] | list[str] | set[str] = (),
    thread_store: Any = None,
) -> Batch:
    """Run ``prompt`` (a template over each row's columns) once per row of ``df``; await the result for a frame.

    Returns a :class:`Batch` at once; ``await`` it for a DataFrame with ``df``'s index, one column per ``schema``
    field and the ``_status`` / ``_error`` / ``_cost_usd`` / ... accounting columns. Invalid options raise
    ``ConfigError`` (naming the option) before any run starts.

    ``progress=True`` shows the live progress view in a notebook with a front end and a terminal line elsewhere;
    ``"view"`` / ``"terminal"`` pick one; ``False`` shows nothing. With the view (in-kernel rows), approval requests
    wait in it for a click; otherwise, without an ``on_approval`` handler in ``options``, they are denied at once
    (the policy's ``on_reject`` fallback applies), except for tools named in ``approve_tools``.

    ``thread_store`` keeps the rows' Threads (``thread=``) in that store instead of the runner's: the batch runs on
    Agents built with the runner's driver and options and this store (on each Dask worker too, when the factory and
    the store pickle), and never changes an Agent passed in.
    """
    _check(df, prompt, schema, concurrency, retries, timeout, max_cost_usd, on_error, progress)
    using = _resolve_runner(with_thread_store(runner, thread_store))
    if not cache:  # a cache may answer every row; otherwise a driver without credentials fails here, at once
        _check_credentials(using.agent)
    check_workspace(workspace, using.agent)
    jobs = _row_jobs(df, prompt, thread, workspace)
    run_with = executor if executor is not None else InKernelExecutor()
    view = _progress_view(progress, using.agent, len(jobs), max_cost_usd, run_with)
    if view is not None:
        view.set_labels([job.label for job in jobs])
    opts = _with_approvals(dict(options or {}), view, progress, run_with, approve_tools)
    settings = RowSettings(schema=schema, retries=retries, timeout=timeout, backoff=backoff, options=opts)
    path = cache_path(cache)
    keys = _cache_keys(using.agent, jobs, schema, opts)
    if getattr(run_with, "needs_factory", False):
        from ._dask import check_remote

        check_remote(using.factory, settings)
    run = BatchRun(
        index=df.index,
        jobs=jobs,
        keys=keys,
        executor=run_with,
        settings=settings,
        runner=using,
        cache=path,
        concurrency=concurrency,
        max_cost_usd=max_cost_usd,
        on_error=on_error,
        view=view,
        terminal=(progress is True and view is None) or progress == "terminal",
    )
    batch = Batch(lambda b: _first_pass(run, b), total=len(jobs))
    batch._retry = lambda: run.retry_failed(batch)
    batch.view = view
    if view is not None:
        view.show()
    return batch


def _progress_view(
    progress: bool | str, agent: Agent, total: int, max_cost_usd: float | None, run_with: Executor
) -> Any:
    """The live progress view (asked for with ``"view"``, or by default in a notebook kernel), following the
    streams of in-kernel rows; else None."""
    if not (progress == "view" or (progress is True and in_kernel())):
        return None
    from ._widget import BatchView

    view = BatchView(driver=agent.driver.name, total=total, max_cost_usd=max_cost_usd)
    if isinstance(run_with, InKernelExecutor):
        run_with.on_stream = view.watch
    return view


def _row_jobs(df: pandas.DataFrame, prompt: str, thread: str | None, workspace: Any) -> list[RowJob]:
    """Each row rendered into a job: its prompt, thread key and workspace from the templates over its columns."""
    spec = workspace if is_spec(workspace) else None
    batch_id = uuid.uuid4().hex[:12]
    jobs: list[RowJob] = []
    for pos, (label, row) in enumerate(df.iterrows()):
        ns = row_namespace(label, row.to_dict())
        jobs.append(
            RowJob(
                label=label,
                prompt=render(prompt, ns),
                thread=render(thread, ns) if thread else None,
                key=f"adaptor_nb-row-{batch_id}-{pos}",
                workspace=render(workspace, ns) if isinstance(workspace, str) and workspace else None,
                workspace_spec=spec,
            )
        )
    return jobs


def _with_approvals(
    opts: dict[str, Any], view: Any, progress: bool | str, run_with: Executor, approve_tools: Any
) -> dict[str, Any]:
    """The run options with an ``on_approval`` handler: the caller's, else the view's clicks when a front end shows
    the view to in-kernel rows, else the headless one (denied at once except for ``approve_tools``)."""
    interactive = view is not None and (progress == "view" or kernel_front_end())
    if "on_approval" not in opts:
        if interactive and isinstance(run_with, InKernelExecutor):
            opts["on_approval"] = view.approvals(approve_tools)
        else:
            from ._approvals import HeadlessApprovals

            opts["on_approval"] = HeadlessApprovals(approve_tools)
    return opts


def _cache_keys(agent: Agent, jobs: list[RowJob], schema: Any, opts: dict[str, Any]) -> list[str]:
    """Each row's cache key: its prompt, the schema, and the driver, configuration, model and workspace it runs on."""
    json_schema = schema.model_json_schema() if schema is not None else None
    driver = agent.driver.name
    fingerprint = str(agent.driver.config_fingerprint())
    model = str(opts.get("model") or agent.settings.run.model)
    workspace = str(agent.settings.run.workspace)
    return [
        cache_key(
            prompt=j.prompt,
            schema=json_schema,
            driver=driver,
            fingerprint=fingerprint,
            model=model,
            workspace=j.workspace
            or (f"{j.workspace_spec!r}#{j.label!r}" if j.workspace_spec is not None else workspace),
        )
        for j in jobs
    ]


async def _first_pass(run: BatchRun, batch: Batch) -> pandas.DataFrame:
    """Every row once; with ``on_error="raise"`` a failed row fails the batch, carrying the frame so far."""
    frame, failures = await run.first_pass(batch)
    if failures:
        raise BatchFailed("; ".join(failures), frame)
    return frame


def map_rows_sync(
    runner: Any, df: pandas.DataFrame, prompt: str, schema: Any = None, **kwargs: Any
) -> pandas.DataFrame:
    """``map_rows`` for plain scripts: runs the batch on a fresh event loop and returns the frame."""

    async def main() -> pandas.DataFrame:
        return await map_rows(runner, df, prompt, schema, **kwargs)

    return asyncio.run(main())
