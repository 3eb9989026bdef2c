"""The in-process player on its own: what it writes, what it waits for, and how it ends."""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import pytest

from adaptor_nb.cassette import _play
from adaptor_nb.cassette._play import MISMATCH, Player

UID = "00000000-0000-4000-8000-000000000007"  # a placeholder id as the cassette writes them


class Pipes:
    """What a stand-in writes: stdout and stderr bytes, and its exit."""

    def __init__(self) -> None:
        self.stdout: list[bytes] = []
        self.stderr: list[bytes] = []
        self.exited: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.wrote = asyncio.Event()

    def out(self, data: bytes) -> None:
        self.stdout.append(data)
        self.wrote.set()

    def err(self, data: bytes) -> None:
        self.stderr.append(data)

    def exit(self, returncode: int) -> None:
        self.exited.set_result(returncode)


def _frames(*frames: tuple[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, body in frames:
        if kind in ("in", "out"):
            out.append({"k": kind, "b": json.dumps(body, separators=(",", ":"))})
        elif kind == "exit":
            out.append({"k": "exit", "rc": body})
        elif kind == "eof":
            out.append({"k": "eof"})
        else:
            out.append({"k": kind, "b": body})
    return out


def _player(frames: list[dict[str, Any]], restore: Any = None) -> tuple[Player, Pipes]:
    pipes = Pipes()
    player = Player(frames, restore or (lambda text: text), asyncio.get_running_loop())
    player.begin(pipes)
    return player, pipes


async def test_output_waits_for_each_recorded_input_and_carries_the_drivers_ids() -> None:
    frames = _frames(
        ("out", {"type": "ready"}),
        ("in", {"type": "user", "uuid": UID}),
        ("out", {"type": "echo", "uuid": UID}),
        ("out", {"type": "other", "uuid": "00000000-0000-4000-8000-000000000008"}),
        ("exit", 0),
    )
    player, pipes = _player(frames)
    assert pipes.stdout == [b'{"type":"ready"}\n'] and not pipes.exited.done()  # waiting for the driver's line
    player.stdin(b'{"type":"user","uuid":"fresh-')
    assert len(pipes.stdout) == 1  # half a line is not a line
    player.stdin(b'1"}\n')
    assert b"".join(pipes.stdout[1:]).splitlines() == [
        b'{"type":"echo","uuid":"fresh-1"}',  # the recorded id, now the one the driver sent
        b'{"type":"other","uuid":"00000000-0000-4000-8000-000000000008"}',  # not one it sent: as recorded
    ]
    assert await pipes.exited == 0


async def test_output_without_a_final_newline_and_paths_come_back_as_recorded() -> None:
    frames: list[dict[str, Any]] = [
        {"k": "in", "b": json.dumps({"uuid": UID})},
        {"k": "out", "b": json.dumps({"uuid": UID, "cwd": "<cwd>"}), "nl": False},
        {"k": "out", "b": "tail"},
        {"k": "err", "b": "at <cwd>\n"},
    ]
    player, pipes = _player(frames, lambda text: text.replace("<cwd>", "/here"))
    player.stdin(json.dumps({"uuid": "mine"}).encode() + b"\n")
    assert b"".join(pipes.stdout) == b'{"uuid":"mine","cwd":"/here"}tail\n'
    assert pipes.stderr == [b"at /here\n"]
    assert not pipes.exited.done()  # the last frame is played: it waits for stdin to close
    player.stdin(b"ignored\n")
    player.stdin_closed()
    assert await pipes.exited == 0


async def test_an_eof_frame_waits_for_stdin_to_close_and_the_recorded_exit_code_ends_it() -> None:
    player, pipes = _player(_frames(("in", {"a": 1}), ("eof", None), ("out", {"b": 2}), ("exit", 7)))
    player.stdin(b'{"a":1}\n{"late":true}\n')
    assert pipes.stdout == [] and not pipes.exited.done()
    player.stdin_closed()
    assert pipes.stdout == [b'{"b":2}\n'] and await pipes.exited == 7


async def test_a_cli_killed_by_a_signal_is_replayed_as_killed() -> None:
    _, pipes = _player(_frames(("out", {"a": 1}), ("exit", -signal.SIGKILL)))
    assert await pipes.exited == -signal.SIGKILL


async def test_terminating_the_stand_in_ends_it_as_a_signal_ends_a_cli() -> None:
    player, pipes = _player(_frames(("in", {"a": 1}), ("out", {"b": 2})))
    player.signal(signal.SIGUSR1)  # a signal a CLI would not die of
    assert not pipes.exited.done()
    player.signal(signal.SIGTERM)
    assert await pipes.exited == -signal.SIGTERM
    player.stdin(b'{"a":1}\n')
    assert pipes.stdout == []  # nothing is played after the end


async def test_a_recorded_message_waits_for_the_host_to_send_it_again() -> None:
    player, pipes = _player(_frames(("msg", "steer left"), ("out", {"after": True})))
    assert pipes.stdout == []
    assert player.admit("steer left") == ""  # the player goes on in the loop's next step, as a process would
    await asyncio.wait_for(pipes.wrote.wait(), 10)
    assert pipes.stdout == [b'{"after":true}\n']


async def test_a_different_or_extra_message_ends_the_replay_with_the_reason() -> None:
    player, pipes = _player(_frames(("msg", "steer left"), ("out", {"after": True})))
    why = player.admit("steer right")
    assert "'steer right'" in why and "'steer left'" in why
    assert await pipes.exited == MISMATCH
    assert pipes.stdout == [] and why in b"".join(pipes.stderr).decode()

    player, pipes = _player(_frames(("out", {"a": 1})))
    assert "has no message" in player.admit("one more")
    assert await pipes.exited == MISMATCH


async def test_a_message_that_never_comes_ends_the_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_play, "MESSAGE_WAIT", 0.01)
    _, pipes = _player(_frames(("msg", "steer left"), ("out", {"after": True})))
    assert await asyncio.wait_for(pipes.exited, 10) == MISMATCH
    assert b"none was sent" in b"".join(pipes.stderr) and pipes.stdout == []
