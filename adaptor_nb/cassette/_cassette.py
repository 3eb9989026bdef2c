"""A cassette as the driver tap: each run is replayed from it or recorded into it, at the process boundary."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .._enums import MessageState
from .._errors import ConfigError
from .._lossless import dumps, has_raw_bytes
from ..driver import _tap
from ._format import Recording, RunKey, digest, dump, load, preview, write_atomic
from ._messages import note
from ._play import Player
from ._scrub import (
    Scrubber,
    clock_times,
    highest_placeholder,
    path_pairs,
    restorer,
    secret_values,
    split_secrets,
    volatile,
)

if TYPE_CHECKING:
    from ..driver._spi import Driver, DriverOutcome, Invocation, RunContext

Mode = Literal["none", "once", "rewrite"]
MODES: tuple[Mode, ...] = ("none", "once", "rewrite")
CASSETTE_ENV = "ADAPTOR_NB_CASSETTE"
MODE_ENV = "ADAPTOR_NB_RECORD_MODE"
TEE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_tee.py")


class CassetteError(ConfigError):
    """A run the cassette cannot serve: no recording for it (mode ``none``), or its prompt or options changed."""


def check_mode(mode: str, where: str = "mode") -> Mode:
    """``mode`` if it is one of none / once / rewrite; a ConfigError naming ``where`` otherwise."""
    if mode not in MODES:
        raise ConfigError(f"{where}: {mode!r} is not a record mode; use one of {', '.join(MODES)}", option=where)
    return mode


@dataclass
class _Process:
    """A process recorded in this session: its tee log and what scrubbing it needs."""

    log: Path
    secrets: set[str]
    paths: list[tuple[str, str]]


@dataclass
class _Run:
    key: RunKey
    replay: Recording | None
    record: Recording | None
    secrets: set[str] = field(default_factory=set)
    spawned: int = 0
    live: Path | Player | None = None  # the process this run started: its tee log, or its player
    mismatch: str = ""  # why a message sent under replay does not match the recording
    early: list[str] = field(default_factory=list)  # messages sent before the run's process started


_CURRENT: contextvars.ContextVar[_Run | None] = contextvars.ContextVar("adaptor_nb_cassette_run", default=None)


def cell_request() -> str:
    """An id of the notebook cell execution running now (its execute request), empty outside IPython."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return ""
    with contextlib.suppress(Exception):
        shell = ipython.get_ipython()
        if shell is not None:
            header = (getattr(shell, "parent_header", None) or {}).get("header") or {}
            return str(header.get("msg_id") or f"In [{shell.execution_count}]")
    return ""


def options_digest(driver: Driver, inv: Invocation) -> str:
    """The SHA-256 of what, besides the prompt, changes a run's answer (no paths, ids or secrets)."""
    schema = inv.output_schema.schema if inv.output_schema is not None else None
    mcp = None if inv.mcp is None else tuple(sorted(getattr(s, "name", "") for s in inv.mcp))
    policy = _answer_policy(inv.policy)
    key = None
    if schema is None:  # the usual case: every part hashable, and the same on each send of a Thread
        try:
            images = tuple(i.sha256 for i in inv.images)
            key = (driver.name, inv.model, inv.instructions, policy, inv.max_turns, inv.fork, mcp, images)
            known = _DIGESTS.get(key)
        except TypeError:
            key = known = None
        if known is not None:
            return known
    parts = {
        "driver": driver.name,
        "model": inv.model,
        "instructions": inv.instructions,
        "policy": repr(policy),
        "schema": schema,
        "max_turns": inv.max_turns,
        "fork": inv.fork,
        "mcp": None if mcp is None else list(mcp),
    }
    if inv.images:  # a run with other images asks something else (absent otherwise: older digests stay valid)
        parts["images"] = [i.sha256 for i in inv.images]
    found = digest(json.dumps(parts, sort_keys=True, default=str))
    if key is not None:
        if len(_DIGESTS) >= 256:
            _DIGESTS.clear()
        _DIGESTS[key] = found
    return found


_DIGESTS: dict[tuple[Any, ...], str] = {}


def _answer_policy(policy: Any) -> Any:
    """The parts of a run's policy that can change its answer: how long an approval waits does not (a notebook
    waits for its person in JupyterLab and a bounded time headless, and the same recording serves both)."""
    approvals = getattr(policy, "approvals", None)
    if approvals is None or getattr(approvals, "timeout", None) is None:
        return policy
    return dataclasses.replace(policy, approvals=dataclasses.replace(approvals, timeout=None))


class Cassette:
    """Record and replay agent runs in the JSONL file ``path``.

    ``mode``: ``none`` replays only (a run without a recording fails naming its cell and prompt), ``once``
    replays what is recorded and records what is missing, ``rewrite`` records every run afresh. Use it as a
    context manager, or ``start()`` / ``close()``; while it is active every CLI driver run goes through it.
    """

    def __init__(self, path: str | os.PathLike[str], mode: str = "none") -> None:
        self.path = Path(path)
        self.mode: Mode = check_mode(mode)
        self.recordings: list[Recording] = [] if self.mode == "rewrite" else load(self.path)
        self._stale: set[tuple[str, str, str, int]] = set()
        self._index: dict[tuple[str, str, str, int], Recording] = {}
        self._claimed: set[tuple[str, str, str, int]] = set()  # direct-send recordings already replayed
        self._turns: Counter[tuple[str, str]] = Counter()
        self._cell = ("", 0)  # the last cell execution that ran an agent, and how many such cells came before
        self._processes: dict[int, _Process] = {}  # id(frames list) -> its tee log
        self._live: dict[tuple[str, str], Path | Player] = {}  # (driver, thread) -> its latest process
        self._players: list[Player] = []
        self._tmp: str | None = None
        self._dirty = False
        self.unsaved: OSError | None = None  # why the last write failed, when it did (close() tries again)
        self.replayed = 0
        self.recorded = 0

    def __repr__(self) -> str:
        return f"Cassette({str(self.path)!r}, mode={self.mode!r}, runs={len(self.recordings)})"

    # -- activation ----------------------------------------------------------------------------------------

    def start(self) -> Cassette:
        _tap.install(self)
        return self

    def close(self) -> None:
        """Stop recording/replaying, write what was recorded and remove the temporary frame logs."""
        _tap.uninstall(self)
        try:
            self._save_or_keep()
        finally:
            for player in self._players:
                player.close()
            self._players.clear()
            self._live.clear()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
                self._tmp = None

    def __enter__(self) -> Cassette:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.close()

    def _scratch(self) -> Path:
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="adaptor_nb-cassette-")
        return Path(self._tmp)

    # -- the tap -------------------------------------------------------------------------------------------

    def replaying(self) -> bool:
        """In a run: whether it plays a recording. Before one (config checks): unless every run is recorded anew."""
        run = _CURRENT.get()
        if run is None:
            return self.mode != "rewrite"
        return run.replay is not None

    def _key(self, driver: Driver, inv: Invocation) -> RunKey:
        thread = inv.thread_key
        self._turns[(driver.name, thread)] += 1
        return RunKey(
            cell=self._cell_label(),
            driver=driver.name,
            thread=thread,
            turn=self._turns[(driver.name, thread)],
            prompt=digest(inv.prompt),
            options=options_digest(driver, inv),
            preview=preview(inv.prompt),
        )

    def _cell_label(self) -> str:
        """``agent cell N``: the Nth notebook cell that ran an agent since the cassette started (cells that run
        none do not count, so adding one does not move the recordings)."""
        request = cell_request()
        if not request:
            return ""
        last, count = self._cell
        if request != last:
            self._cell = (request, count + 1)
        return f"agent cell {self._cell[1]}"

    def _find(self, key: RunKey) -> Recording | None:
        if len(self._index) != len(self.recordings):
            self._index = {}
            for rec in self.recordings:
                self._index.setdefault(rec.key.place, rec)  # the first one for a place, as the file has them
        return self._index.get(key.place)

    def _direct(self, key: RunKey) -> Recording | None:
        """For a direct send (no thread): an unreplayed recording of the same cell and driver that asked the same,
        whatever its place. Concurrent sends (``map_rows``) reach the cassette in no fixed order, and nothing
        carries over between direct sends, so what they ask identifies them."""
        for rec in self.recordings:
            k = rec.key
            if k.thread or k.place in self._claimed or (k.cell, k.driver) != (key.cell, key.driver):
                continue
            if (k.prompt, k.options) == (key.prompt, key.options):
                return rec
        return None

    def _plan(self, key: RunKey) -> _Run:
        if self.mode != "rewrite" and not key.thread and (direct := self._direct(key)) is not None:
            self._claimed.add(direct.key.place)
            return _Run(key, replay=direct, record=None)
        found = self._find(key) if self.mode != "rewrite" else None
        same = found is not None and (found.key.prompt, found.key.options) == (key.prompt, key.options)
        if same and key.place not in self._stale:
            return _Run(key, replay=found, record=None)
        if self.mode == "none":
            raise CassetteError(self._miss(key, found), option="cassette", details={"cassette": str(self.path)})
        return _Run(key, replay=None, record=Recording(key))

    def _miss(self, key: RunKey, found: Recording | None) -> str:
        where = f"{self.path} has no recording for {key.where()}"
        if found is not None and found.key.prompt != key.prompt:
            why = f"the prompt changed: it is now {key.preview!r}, the recording is for {found.key.preview!r}"
        elif found is not None and found.key.options != key.options:
            why = f"the options of the prompt {key.preview!r} changed (model, instructions, policy or schema)"
        elif found is not None:
            why = f"an earlier run of that thread was recorded again, so its recording of {key.preview!r} is stale"
        else:
            why = f"nothing was recorded there for the prompt {key.preview!r}"
        return (
            f"{where}: {why}. Record it with %agent record {self.path} --mode once (or "
            f"{MODE_ENV}=once), or run the notebook top to bottom in a fresh kernel"
        )

    async def run(self, driver: Driver, invocation: Invocation, ctx: RunContext) -> DriverOutcome:
        key = self._key(driver, invocation)
        run = self._plan(key)
        config = getattr(driver, "config", None)
        run.secrets = {v for v in (getattr(config, "secret_env", None) or {}).values() if isinstance(v, str)}
        token = _CURRENT.set(run)
        queue = ctx.messages
        watch = queue is not None and hasattr(queue, "on_admitted")
        if watch:
            setattr(queue, "on_admitted", lambda _id, text: self._admitted(run, text))  # noqa: B010 - not in the SPI
            for queued in getattr(queue, "outcomes", list)():  # sent before the run reached the driver
                if queued.state is MessageState.ACCEPTED:
                    self._admitted(run, queued.text)
        try:
            outcome = await driver.run(invocation, ctx)
        except Exception as exc:
            if run.mismatch:
                raise self._mismatch(run) from exc
            raise
        finally:
            _CURRENT.reset(token)
            if watch:
                setattr(queue, "on_admitted", None)  # noqa: B010
            if run.record is not None:
                self._keep(run.record)
            else:
                self.replayed += 1
        if run.mismatch:
            raise self._mismatch(run)
        return outcome

    def _admitted(self, run: _Run, text: str) -> None:
        """The host sent a message in ``run``: note it in the recording, or check it against the one replayed."""
        target = run.live
        if target is None and run.key.thread:
            target = self._live.get((run.key.driver, run.key.thread))  # a Thread's process kept from a run before
        if target is None:
            run.early.append(text)  # sent before the run's process started: noted there when it starts
        elif isinstance(target, Path):
            note(target, text)
        elif not run.mismatch:
            run.mismatch = target.admit(text)

    def _started(self, run: _Run, target: Path | Player) -> None:
        """The run's process starts: it becomes the one messages are noted in, from the messages sent already."""
        run.live = self._live[(run.key.driver, run.key.thread)] = target
        early, run.early = run.early, []
        for text in early:
            self._admitted(run, text)

    def _mismatch(self, run: _Run) -> CassetteError:
        return CassetteError(
            f"{self.path}: {run.key.where()}: {run.mismatch}. Record it again with %agent record {self.path} "
            f"--mode rewrite (or {MODE_ENV}=rewrite)",
            option="cassette",
            details={"cassette": str(self.path)},
        )

    def _keep(self, rec: Recording) -> None:
        """Put a new recording in place of the old one for its place, and mark later turns of its thread stale."""
        place = rec.key.place
        self.recordings = [r for r in self.recordings if r.key.place != place] + [rec]
        self._index = {}
        for other in self.recordings:
            k = other.key
            if (k.driver, k.thread) == (rec.key.driver, rec.key.thread) and k.turn > rec.key.turn and k.thread:
                self._stale.add(k.place)
        self._stale.discard(place)
        self.recorded += 1
        self._dirty = True
        try:
            self.save()
        except OSError as exc:  # the run goes on as without a cassette; close() reports it and keeps the runs
            self.unsaved = exc
        else:
            self.unsaved = None

    def spawn(self, argv: list[str], cwd: str | None, env: Mapping[str, str] | None) -> list[str] | Player:
        run = _CURRENT.get()
        if run is None:
            return argv  # a probe or a model listing outside any run: the real CLI
        where = cwd or os.getcwd()
        home = (env or os.environ).get("HOME", "")
        index = run.spawned
        run.spawned += 1
        if run.replay is not None:
            if index >= len(run.replay.processes):
                raise CassetteError(
                    f"{self.path}: {run.key.where()} starts a CLI process more than the recording did "
                    f"({len(run.replay.processes)}); record it again with --mode once",
                    option="cassette",
                )
            player = Player(run.replay.processes[index], restorer(where, home, env), asyncio.get_running_loop())
            self._players.append(player)
            self._started(run, player)
            return player  # played in this process: no CLI, no player process
        assert run.record is not None
        frames_list: list[dict[str, Any]] = []
        run.record.processes.append(frames_list)
        log = self._scratch() / f"tee-{len(self._processes) + 1}.jsonl"
        log.touch()
        secrets = secret_values(env, run.secrets)
        self._processes[id(frames_list)] = _Process(log, secrets, path_pairs(where, home, env))
        self._started(run, log)
        return [sys.executable, TEE, str(log), "--", *argv]

    # -- writing -------------------------------------------------------------------------------------------

    def _collect(self) -> None:
        """Read the tee logs of this session's processes into their recordings, scrubbed."""
        existing = "\n".join(
            json.dumps(f) for r in self.recordings for p in r.processes if id(p) not in self._processes for f in p
        )
        scrub = Scrubber(highest_placeholder(existing))
        for rec in self.recordings:
            for frames in rec.processes:
                proc = self._processes.get(id(frames))
                if proc is None:
                    continue
                fresh: list[dict[str, Any]] = []
                with contextlib.suppress(OSError), proc.log.open(encoding="utf-8") as fh:
                    for raw in fh:
                        if not raw.endswith("\n"):
                            break  # a frame being written right now
                        frame = json.loads(raw)
                        if "b" in frame:
                            text = scrub.text(str(frame["b"]), proc.secrets, proc.paths)
                            if frame["k"] in ("in", "out") and not has_raw_bytes(text):
                                with contextlib.suppress(ValueError):
                                    text = dumps(volatile(json.loads(text)))
                            if frame["k"] == "err":
                                text = clock_times(text)
                            frame["b"] = text
                        fresh.append(frame)
                frames[:] = split_secrets(fresh, proc.secrets)

    def save(self) -> None:
        """Write the cassette if this session recorded anything."""
        if not self._dirty:
            return
        self._collect()
        write_atomic(self.path, dump(self.recordings))

    def _save_or_keep(self) -> None:
        """``save()``; when the cassette cannot be written, what was recorded goes to a file in the temporary
        folder instead, and a CassetteError names both."""
        try:
            self.save()
        except OSError as exc:
            text = dump(self.recordings)
            fd, kept = tempfile.mkstemp(prefix=f"adaptor_nb-unsaved-{self.path.stem}-", suffix=".jsonl")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            raise CassetteError(
                f"cannot write the cassette {self.path} ({exc.strerror or exc}); the {len(self.recordings)} "
                f"recorded runs were saved to {kept} instead: move that file there once the cause is fixed",
                option="cassette",
                details={"cassette": str(self.path), "saved_to": kept},
            ) from exc
        self.unsaved = None


_ACTIVE: list[Cassette] = []
_AT_EXIT: list[object] = []


def use(path: str | os.PathLike[str], mode: str = "none") -> Cassette:
    """Make the cassette at ``path`` the active one (closing the one active before) and return it."""
    stop()
    cassette = Cassette(path, mode).start()
    if not _ACTIVE and not _AT_EXIT:
        _AT_EXIT.append(atexit.register(stop))  # a kernel shut down with a cassette on still writes it
    _ACTIVE.append(cassette)
    return cassette


def stop() -> Cassette | None:
    """Close the active cassette, if any, and return it."""
    cassette = _ACTIVE.pop() if _ACTIVE else None
    if cassette is not None:
        cassette.close()
    return cassette


def active() -> Cassette | None:
    """The cassette started with ``use()`` (or from the environment), if any."""
    return _ACTIVE[-1] if _ACTIVE else None


def env_mode(default: str = "none") -> Mode:
    """The record mode from ``$ADAPTOR_NB_RECORD_MODE`` (``default`` when unset)."""
    return check_mode(os.environ.get(MODE_ENV, "").strip() or default, MODE_ENV)


def from_env() -> Cassette | None:
    """Start the cassette ``$ADAPTOR_NB_CASSETTE`` names, in ``$ADAPTOR_NB_RECORD_MODE`` (default ``none``)."""
    path = os.environ.get(CASSETTE_ENV, "").strip()
    if not path:
        return None
    return use(path, env_mode())


_tap.on_first_use(from_env)  # the environment's cassette starts when the first run asks for a tap
