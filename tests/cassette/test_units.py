"""The cassette's parts on their own: scrubbing, id learning in the player, the file format, %agent record."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from adaptor_nb import cassette
from adaptor_nb.cassette import _play, _scrub
from adaptor_nb.cassette._format import Recording, RunKey, dump, load
from adaptor_nb.notebook._args import OptionError
from adaptor_nb.notebook._record import record_command


def test_scrubbing_replaces_secrets_paths_and_ids_consistently(tmp_path: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "sk-ant-abcdef123456", "CODEX_HOME": str(tmp_path / "ch"), "PLAIN": "visible-value"}
    secrets = _scrub.secret_values(env, ["private-value-1"])
    paths = _scrub.path_pairs(str(tmp_path / "work"), str(tmp_path / "home"), env)
    scrub = _scrub.Scrubber()
    line = json.dumps(
        {
            "key": "sk-ant-abcdef123456",
            "other": "private-value-1 visible-value",
            "cwd": f"{tmp_path}/work/a.txt",
            "home": f"{tmp_path}/home/.claude",
            "ch": f"{tmp_path}/ch/config.toml",
            "session_id": "6f1c0c6e-2a7b-4f3e-9a55-2d7f7c0e9b11",
            "again": "6F1C0C6E-2A7B-4F3E-9A55-2D7F7C0E9B11",
            "msg": "msg_0123456789abcdefABCD",
        }
    )
    out = json.loads(scrub.text(line, secrets, paths))
    assert out["key"] == "<secret>" and out["other"] == "<secret> visible-value"
    assert (out["cwd"], out["home"], out["ch"]) == ("<cwd>/a.txt", "<home>/.claude", "<$CODEX_HOME>/config.toml")
    assert out["session_id"] == out["again"] == "00000000-0000-4000-8000-000000000001"
    assert out["msg"] == "msg_00000000000000000002"
    back = _scrub.restore(json.dumps(out), "/elsewhere/work", "/elsewhere/home", {"CODEX_HOME": "/elsewhere/ch"})
    assert json.loads(back)["ch"] == "/elsewhere/ch/config.toml" and json.loads(back)["cwd"] == "/elsewhere/work/a.txt"
    assert _scrub.volatile({"duration_ms": 812, "result": {"durationMs": 3}, "turns": 2}) == {
        "duration_ms": 0,
        "result": {"durationMs": 0},
        "turns": 2,
    }


def test_the_player_answers_with_the_ids_the_driver_sent_now() -> None:
    ids = _play.Ids()
    _play.learn(
        {"type": "control_request", "request_id": "req_1_old"},
        {"type": "control_request", "request_id": "req_1_new"},
        ids,
    )
    _play.learn({"id": 7, "method": "turn/start"}, {"id": 7, "method": "turn/start"}, ids)
    line = json.dumps({"response": {"request_id": "req_1_old", "text": "req_1_old"}}).encode()
    out = json.loads(_play._out_line(line, ids))
    assert out == {"response": {"request_id": "req_1_new", "text": "req_1_old"}}  # only id fields change


def test_the_player_finds_placeholder_ids_among_many() -> None:
    ids = _play.Ids()
    old = [f"{_scrub.PLACEHOLDER_PREFIX}{n:012d}" for n in range(1, 101)]
    for n, value in enumerate(old):
        _play.learn({"type": "user", "uuid": value}, {"type": "user", "uuid": f"fresh-{n}"}, ids)
    echo = json.dumps({"type": "user", "uuid": old[57], "session_id": f"{_scrub.PLACEHOLDER_PREFIX}{999:012d}"})
    assert json.loads(_play._out_line(echo.encode(), ids))["uuid"] == "fresh-57"
    other = json.dumps({"type": "stream_event", "uuid": f"{_scrub.PLACEHOLDER_PREFIX}{500:012d}"}).encode()
    assert _play._out_line(other, ids) is other  # no recorded id in it: passed on as it is, unparsed


def test_the_quick_id_match_agrees_with_decoding_or_declines() -> None:
    old = f"{_scrub.PLACEHOLDER_PREFIX}{3:012d}"
    recorded = json.dumps({"type": "user", "uuid": old, "text": "hi"}, separators=(",", ":")).encode()
    same_length = "abcdef01-2345-4678-9abc-def012345678"
    ids = _play.Ids()
    assert _play.learn_line(recorded, recorded.replace(old.encode(), same_length.encode()), ids)
    assert _play._out_line(recorded, ids) == recorded.replace(old.encode(), same_length.encode())
    declined = [
        recorded.replace(old.encode(), b"short"),  # another length: left to the decoder
        recorded.replace(b'"hi"', b'"ho"'),  # a change outside an id
        recorded.replace(old.encode(), b"abcdef01-2345-4678-9abc-def01234567\\"),  # an escape in the value
        recorded.replace(b'"uuid"', b'"uuix"'),  # not an id key
    ]
    for actual in declined:
        fresh = _play.Ids()
        assert not _play.learn_line(recorded, actual, fresh), actual
        assert not fresh.found_in(recorded)


def test_swapping_ids_in_a_burst_agrees_with_decoding_each_line() -> None:
    rng = random.Random(7)
    learnt = [f"{_scrub.PLACEHOLDER_PREFIX}{n:012d}" for n in range(1, 9)]
    unknown = f"{_scrub.PLACEHOLDER_PREFIX}{99:012d}"
    ids = _play.Ids()
    actual: list[str | int] = ["plain-1", 'quo"te', "ünïcode", 42, "x\\y", "plain-6", "plain-7", "plain-8"]
    for old, new in zip(learnt, actual, strict=True):
        ids.add(old, new)
    values = [*learnt, unknown, "text", 7]
    keys = ["uuid", "id", "request_id", "parent_tool_use_id", "session_id", "text", 'x"uuid', "uuid "]

    def value(depth: int) -> object:
        roll = rng.random()
        if depth < 3 and roll < 0.2:
            return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 4))}
        if depth < 3 and roll < 0.3:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if roll < 0.4:
            return f'say "uuid":"{rng.choice(learnt)}" and ,"id":"{rng.choice(learnt)}"'  # ids inside a text
        return rng.choice(values)

    for _ in range(300):
        lines = [
            json.dumps({rng.choice(keys): value(0) for _ in range(rng.randint(1, 5))}, separators=(",", ":"))
            for _ in range(rng.randint(1, 4))
        ]
        burst = ("\n".join(lines) + "\n").encode()
        want = b"".join(_play._out_line(line.encode(), ids) + b"\n" for line in lines)
        got = ids.swapped(burst)
        assert got is not None
        assert [json.loads(x) for x in got.splitlines()] == [json.loads(x) for x in want.splitlines()], burst
    ids.add(5, 6)  # an id that is not a placeholder: the lines are decoded after all
    assert ids.swapped(b'{"id":5}\n') is None


def test_restoring_paths_puts_each_token_back_once() -> None:
    put_back = _scrub.restorer("/w/", "/h", {"CODEX_HOME": "/c h", "EMPTY": ""})
    text = json.dumps(
        {"a": "<cwd>/x", "b": "<home>", "c": "<$CODEX_HOME>/y", "d": "<$EMPTY>", "e": "<$NONE>", "f": "<x>"}
    )
    assert json.loads(put_back(text)) == {
        "a": "/w/x",
        "b": "/h",
        "c": "/c h/y",
        "d": "<$EMPTY>",
        "e": "<$NONE>",
        "f": "<x>",
    }
    assert put_back("no tokens") == "no tokens"
    assert _scrub.restore("<cwd>", "", "") == "<cwd>"  # no path to put back: the token stays


def test_the_player_reads_and_writes_json_as_the_json_package_does() -> None:
    lines = [
        b'{"a":[1,2.5,"x\\u00e9\xc3\xa9",null,true,false,{"b":{}}]}',
        b" [1, -2e3] ",
        b"NaN",
        b'"just a string"',
        b"1 2",
        b'{"a":',
        b"",
        b"not json",
        b'{"a": 1}\xff',
    ]
    for line in lines:
        try:
            expected = json.loads(line.decode("utf-8"))
        except ValueError:
            expected = None
        got = _play._parse(line)
        assert got == expected or (got != got and expected != expected), line  # NaN is not equal to itself
        if expected is not None:
            assert _play._dumps(got) == json.dumps(expected, ensure_ascii=False, separators=(",", ":"))


def test_the_replay_cli_starts_without_the_slow_imports() -> None:
    here = Path(_play.__file__).parent.parent / "testing"
    code = (
        f"import sys; sys.path.insert(0, {str(here)!r}); import _replay; "
        "print(' '.join(sorted({'json', 're', 'typing', 'enum', 'collections'} & set(sys.modules))))"
    )
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_replay_cli_passes_long_runs_of_lines_on_as_blocks_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from adaptor_nb.testing import _replay

    monkeypatch.setattr(_replay, "BLOCK", 64)  # many blocks, and lines cut at block ends
    rng = random.Random(7)
    kinds = [b'{"type":"x","n":%d}', b"", b"\r", b'{"type":"result"}', b'{"a":"b"}\r', b'{"type":"control_request"}']
    path = tmp_path / "stdout.jsonl"
    blocks = 0
    for _ in range(200):
        picks = rng.choices(kinds, weights=[20, 1, 1, 1, 1, 1], k=rng.randint(0, 40))
        lines = [line.replace(b"%d", str(n).encode()) for n, line in enumerate(picks)]
        path.write_bytes(b"\n".join(lines) + rng.choice([b"", b"\n", b"\n\n"]))
        pieces = list(_replay._pieces(str(path)))
        blocks += sum(b"\n" in piece for piece in pieces)
        assert b"\n".join(pieces) == b"\n".join(_replay.load_fixture(str(path)))
    assert blocks > 50  # the block path was taken, not only the line by line one


def test_the_file_format_round_trips(tmp_path: Path) -> None:
    key = RunKey("agent cell 1", "claude", "t", 1, "p" * 16, "o" * 16, "a prompt")
    frames = [
        {"k": "in", "b": '{"a":1}'},
        {"k": "out", "b": "not json"},
        {"k": "err", "b": "warn"},
        {"k": "exit", "rc": 3},
    ]
    path = tmp_path / "c.jsonl"
    path.write_text(dump([Recording(key, [frames])]))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[2] == {"p": "p1", "in": {"a": 1}} and lines[3] == {"p": "p1", "out_text": "not json"}
    [rec] = load(path)
    assert rec.key == key
    assert rec.processes == [[frames[0], {**frames[1], "t": True}, *frames[2:]]]  # loaded, text lines are marked


def test_record_magic_names_a_bad_mode_and_starts_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(cassette.MODE_ENV, raising=False)
    with pytest.raises(OptionError, match="--mode: 'sometimes' is not a record mode"):
        record_command(["runs.jsonl", "--mode", "sometimes"])
    assert cassette.active() is None
    assert record_command(["runs.jsonl", "--mode", "once"]) == (
        "agent runs are replayed from it, and recorded into it when missing: runs.jsonl, mode once"
    )
    assert record_command([]) == "cassette runs.jsonl (mode once, 0 recorded runs)"
    monkeypatch.setenv(cassette.MODE_ENV, "none")  # the environment wins over --mode
    assert record_command(["runs.jsonl", "--mode", "rewrite"]).endswith("mode none")
    assert record_command(["off"]) == "cassette runs.jsonl closed"
    assert record_command(["off"]) == "no cassette was active"
    assert not (tmp_path / "runs.jsonl").exists()  # nothing recorded, nothing written


@pytest.mark.parametrize("mode", ["none", "once", "rewrite"])
def test_the_offline_demo_driver_runs_under_a_cassette_and_is_not_recorded(tmp_path: Path, mode: str) -> None:
    """The scripted reference driver needs no recording: under any mode it runs as it is, and leaves the cassette
    as it was (a notebook mixing it with a CLI driver replays in mode none)."""
    import asyncio

    from adaptor_nb import Agent
    from adaptor_nb.drivers import reference

    async def main() -> str:
        agent = Agent(reference.Driver())
        try:
            return (await agent.thread("t").send("hello").result()).text
        finally:
            await agent.close()

    path = tmp_path / "demo.jsonl"
    with cassette.Cassette(path, mode=mode) as tape:  # type: ignore[arg-type]
        text = asyncio.run(main())
    assert "hello" in text
    assert (tape.recorded, tape.replayed) == (0, 0)
    assert not path.exists() or load(path) == []
