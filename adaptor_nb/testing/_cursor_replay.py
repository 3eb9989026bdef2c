"""A stand-in for the Cursor Agent CLI that replays a recorded stream-json file, for tests and for users' recordings.

Run it as the driver's command::

    cursor.Config(command=[sys.executable, "-m", "adaptor_nb.testing._cursor_replay", "RECORDING", *options])

(``cursor_replay_command(RECORDING, ...)`` builds that list). The driver's own arguments follow. Like the real CLI
it takes ``-p --output-format stream-json [--stream-partial-output] --workspace DIR [--trust] [--resume ID]
[--model M] [--mode agent|ask|plan] [--force|--yolo] [--approve-mcps]``, reads the prompt on stdin, refuses an
unknown flag or a prompt on the command line with exit code 1, then prints the recording one line at a time. A
recording that ends without a ``result`` (or ``run.completed``) line makes it exit with code 1, like a CLI that died
mid-turn.
``--version`` and ``models`` answer without a recording.

Replay options (before or among the driver's arguments, each ``--replay-NAME VALUE``):

* ``--replay-on-resume ID=FILE``: replay FILE instead when the driver passes ``--resume ID``;
* ``--replay-expect FLAG`` / ``--replay-expect FLAG=VALUE``: exit 2 unless argv has FLAG (with VALUE);
* ``--replay-forbid FLAG``: exit 2 if argv has FLAG;
* ``--replay-log PATH``: append one JSON line (argv, prompt, cwd, whether ``CURSOR_API_KEY`` was set, and the
  parsed ``<workspace>/.cursor/mcp.json`` as ``mcp_json``, None when there is none);
* ``--replay-expect-mcp NAME`` / ``--replay-expect-mcp NAME=ENV``: exit 2 unless ``<workspace>/.cursor/mcp.json``
  declares server NAME (and, with ``=ENV``, each ``${env:VAR}`` it names is set in this process's environment);
* ``--replay-stderr TEXT``: write TEXT to stderr first;
* ``--replay-die-after N``: SIGKILL itself after printing N lines;
* ``--replay-hang-after N``: after N lines, wait until killed;
* ``--replay-gate N=FIFO``: before line N, wait until a writer opens and closes the named pipe FIFO;
* ``--replay-gate-when REGEX`` / ``--replay-fail-when REGEX``: gate only (fail at once, after ``system/init``)
  when the prompt matches REGEX;
* ``--replay-exit CODE``: the exit code for a recording without a terminal line (default 1).
* ``--replay-call-host NAME=JSONARGS`` (repeatable): after the recording's first line, really call tool NAME
  (``SERVER/NAME`` for another server than ``pytools``) of the HTTP server ``<workspace>/.cursor/mcp.json`` declares,
  over MCP streamable HTTP with ``${env:VAR}`` expanded from this process's environment. All the calls are one model
  step: a ``tool_call`` started line for each (Cursor's ``mcpToolCall`` shape), then the calls run in parallel and
  each prints its completed line when it ends (a refused or failed call completes with an ``error``); the rest of
  the recording follows once all have ended;
* ``--replay-call-host-when REGEX``: make those calls only when the prompt matches REGEX;
* ``--replay-expect-result TEXT`` (repeatable): the calls' results must contain TEXT; if one lacks, ``@answer``
  answers ``The tool results lack [...]`` instead of the reply, and a recording stops with exit code 1;
* ``--replay-env VAR=VALUE``: use VALUE for VAR when expanding ``${env:VAR}`` for those calls (a wrong token).
* ``--replay-run-hooks PATH``: at each ``tool_call`` started line, run the hooks ``<workspace>/.cursor/hooks.json``
  names for it, as Cursor does before a tool runs (``beforeShellExecution`` for a shell call, ``beforeMCPExecution``
  for an MCP call, then ``preToolUse`` for every call), each command through ``sh -c`` with the hook's JSON on stdin,
  and append one JSON line per hook to PATH: ``event``, ``command`` and the parsed ``answer`` (None when unreadable).

RECORDING ``@answer`` makes it answer instead of replaying: ``system/init``, the text after ``Reply with exactly:``
in the prompt as assistant messages, and a ``result``; the session id is the ``--resume`` id or a fresh one.
Standard library only.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

from ._cursor_mcp_call import CallFailed, call_tool

__all__ = ["VERSION", "cursor_replay_command", "main"]

VERSION = "2026.01.01-replay"
MODELS = ("auto - Auto (default)", "gpt-5 - GPT-5", "sonnet-4.5 - Claude 4.5 Sonnet")
_VALUED = {"--output-format", "--workspace", "--resume", "--model", "-m", "--mode", "--api-key"}
_SWITCHES = {"-p", "--print", "--stream-partial-output", "--trust", "--force", "-f", "--yolo", "--approve-mcps"}
_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_MODES = ("agent", "ask", "plan")
_MARKER = "Reply with exactly:"

Emit = Callable[[bytes], None]


def cursor_replay_command(recording: str, *options: str, python: str | None = None) -> list[str]:
    """The argv prefix that runs this stand-in on ``recording`` with replay ``options`` (``--replay-...``)."""
    return [python or sys.executable, "-m", "adaptor_nb.testing._cursor_replay", recording, *options]


class Usage(Exception):
    """A command line the real CLI would refuse."""


def _split(argv: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Replay options (``--replay-x V``) apart from the CLI's own arguments."""
    replay: dict[str, list[str]] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--replay-"):
            if i + 1 >= len(argv):
                raise Usage(f"{arg} needs a value")
            replay.setdefault(arg[len("--replay-") :], []).append(argv[i + 1])
            i += 2
            continue
        rest.append(arg)
        i += 1
    return replay, rest


def _parse_cli(args: list[str]) -> dict[str, str]:
    """The CLI's flags as a dict (switches map to ""); raises Usage like the CLI would."""
    flags: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in _VALUED:
            if not eq:
                if i + 1 >= len(args):
                    raise Usage(f"error: option '{name}' argument missing")
                value = args[i + 1]
                i += 1
            flags[name] = value
        elif arg in _SWITCHES:
            flags[arg] = ""
        elif arg.startswith("-"):
            raise Usage(f"error: unknown option '{arg}'")
        else:
            raise Usage(f"replay: unexpected argument {arg!r}: the prompt must come on stdin, not on the command line")
        i += 1
    if "-p" not in flags and "--print" not in flags:
        raise Usage("replay: -p/--print is required for headless output")
    if flags.get("--output-format") != "stream-json":
        raise Usage(f"replay: --output-format must be stream-json, got {flags.get('--output-format')!r}")
    workspace = flags.get("--workspace", "")
    if not workspace or not os.path.isdir(workspace):
        raise Usage(f"replay: --workspace must name an existing directory, got {workspace!r}")
    if "--mode" in flags and flags["--mode"] not in _MODES:
        raise Usage(f"error: option '--mode' must be one of {', '.join(_MODES)}")
    return flags


def _check(replay: dict[str, list[str]], flags: dict[str, str]) -> None:
    for want in replay.get("expect", []):
        name, eq, value = want.partition("=")
        if name not in flags or (eq and flags[name] != value):
            got = flags.get(name, "<absent>")
            raise Usage(f"replay: expected {want!r} in the command line, got {name} {got!r}")
    for name in replay.get("forbid", []):
        if name in flags:
            raise Usage(f"replay: {name} must not be passed")
    for want in replay.get("expect-mcp", []):
        name, eq, _ = want.partition("=")
        doc = _project_mcp(flags)
        servers = doc.get("mcpServers") if isinstance(doc, dict) else None
        if not isinstance(servers, dict) or name not in servers:
            raise Usage(f"replay: expected MCP server {name!r} in <workspace>/.cursor/mcp.json, got {doc!r}")
        if eq:
            missing = [v for v in _ENV_REF.findall(json.dumps(servers[name])) if v not in os.environ]
            if missing:
                raise Usage(f"replay: MCP server {name!r} names unset environment variables {missing}")


def _project_mcp(flags: dict[str, str]) -> Any:
    """The parsed ``.cursor/mcp.json`` of the workspace (None when absent or unreadable)."""
    try:
        with open(os.path.join(flags.get("--workspace", ""), ".cursor", "mcp.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _answer_lines(prompt: str, flags: dict[str, str], session: str = "", reply: str = "") -> list[bytes]:
    session = session or flags.get("--resume") or f"replay-{uuid.uuid4().hex[:12]}"
    _, found, tail = prompt.partition(_MARKER)
    reply = reply or (tail.strip().splitlines()[0].strip() if found and tail.strip() else "OK")
    words = reply.split(" ")
    chunks = [w if i == 0 else " " + w for i, w in enumerate(words)]
    frames: list[dict[str, Any]] = [
        {
            "type": "system",
            "subtype": "init",
            "apiKeySource": "env" if os.environ.get("CURSOR_API_KEY") else "login",
            "cwd": flags["--workspace"],
            "session_id": session,
            "model": flags.get("--model") or "auto",
            "permissionMode": "default",
        }
    ]
    content = [{"type": "text", "text": prompt}]
    frames.append({"type": "user", "message": {"role": "user", "content": content}, "session_id": session})
    for chunk in chunks:
        message = {"role": "assistant", "content": [{"type": "text", "text": chunk}]}
        frames.append({"type": "assistant", "message": message, "session_id": session})
    frames.append(
        {
            "type": "result",
            "subtype": "success",
            "duration_ms": 1,
            "duration_api_ms": 1,
            "is_error": False,
            "result": reply,
            "session_id": session,
            "request_id": f"req-{uuid.uuid4().hex[:8]}",
        }
    )
    return [json.dumps(f).encode() for f in frames]


def _host_frame(sub: str, call_id: str, inner: dict[str, Any], session: str) -> bytes:
    frame = {
        "type": "tool_call",
        "subtype": sub,
        "call_id": call_id,
        "tool_call": {"mcpToolCall": inner, "toolCallId": call_id},
        "session_id": session,
    }
    return json.dumps(frame).encode()


def _one_call(entry: Any, tool: str, arguments: dict[str, Any], env: dict[str, str]) -> tuple[dict[str, Any], str]:
    """The ``mcpToolCall`` result of one real call and the texts it carries."""
    try:
        if not isinstance(entry, dict):
            raise CallFailed("no such MCP server in .cursor/mcp.json")
        got = call_tool(entry, tool, arguments, env)
    except CallFailed as exc:
        return {"error": {"error": str(exc)}}, str(exc)
    texts = [str(c.get("text", "")) for c in got.get("content") or () if isinstance(c, dict)]
    success = {"content": [{"text": {"text": t}} for t in texts], "isError": bool(got.get("isError"))}
    return {"success": success}, "\n".join(texts)


def _host_calls(replay: dict[str, list[str]], flags: dict[str, str], session: str, emit: Emit) -> str:
    """Make each ``--replay-call-host`` call for real, all at once as one model step, emitting Cursor's
    ``tool_call`` started lines, then a completed line as each call ends; the texts of all results."""
    env = dict(os.environ)
    env.update(dict(pair.partition("=")[::2] for pair in replay.get("env", [])))
    doc = _project_mcp(flags)
    servers = doc.get("mcpServers") if isinstance(doc, dict) else None
    texts: list[str] = []
    threads: list[threading.Thread] = []
    for n, spec in enumerate(replay.get("call-host", [])):
        target, _, raw = spec.partition("=")
        server, _, tool = target.rpartition("/")
        server = server or "pytools"
        arguments = json.loads(raw) if raw else {}
        call_id = f"call_host_{n}\nfc_host_{n}"
        args = {
            "name": f"{server}-{tool}",
            "args": arguments,
            "toolCallId": call_id,
            "providerIdentifier": server,
            "toolName": tool,
            "serverIdentifier": server,
        }
        entry = servers.get(server) if isinstance(servers, dict) else None
        emit(_host_frame("started", call_id, {"args": args}, session))

        def work(
            entry: Any = entry,
            tool: str = tool,
            arguments: dict[str, Any] = arguments,
            args: dict[str, Any] = args,
            call_id: str = call_id,
        ) -> None:
            result, text = _one_call(entry, tool, arguments, env)
            texts.append(text)
            emit(_host_frame("completed", call_id, {"args": args, "result": result}, session))

        threads.append(threading.Thread(target=work, daemon=True))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return "\n".join(texts)


Host = Callable[[Emit], "list[bytes] | None"]


def _host_step(
    replay: dict[str, list[str]], flags: dict[str, str], prompt: str, recording: str, lines: list[bytes]
) -> Host:
    """The step after the first line: the host calls, then the rest of the lines (None: exit 1, results lacking)."""
    session = _session_of(lines[0])

    def step(emit: Emit) -> list[bytes] | None:
        seen = _host_calls(replay, flags, session, emit)
        missing = [t for t in replay.get("expect-result", []) if t not in seen]
        if not missing:
            return lines[1:]
        if recording == "@answer":
            return _answer_lines(prompt, flags, session, f"The tool results lack {missing}.")[1:]
        sys.stderr.write(f"replay: the tool results lack {missing}\n")
        return None

    return step


def _session_of(line: bytes) -> str:
    try:
        obj = json.loads(line)
    except ValueError:
        return ""
    return str(obj.get("session_id") or "") if isinstance(obj, dict) else ""


def _load(path: str) -> list[bytes]:
    with open(path, "rb") as fh:
        return [line.rstrip(b"\r\n") for line in fh if line.strip()]


def _terminal(line: bytes) -> bool:
    if b'"result"' not in line and b'"run.completed"' not in line:
        return False
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and obj.get("type") in ("result", "run.completed")


def _hook_events(line: bytes) -> tuple[list[str], dict[str, Any]]:
    """The hooks Cursor runs before the tool call a ``started`` line announces, and the hook input's fields."""
    try:
        obj = json.loads(line)
    except ValueError:
        return [], {}
    if not isinstance(obj, dict) or obj.get("type") != "tool_call" or obj.get("subtype") != "started":
        return [], {}
    call: dict[str, Any] = obj["tool_call"] if isinstance(obj.get("tool_call"), dict) else {}
    kind = next(iter(call), "")
    inner: dict[str, Any] = call[kind] if isinstance(call.get(kind), dict) else {}
    args: dict[str, Any] = inner["args"] if isinstance(inner.get("args"), dict) else {}
    fields: dict[str, Any] = {"conversation_id": obj.get("session_id", ""), "tool_call_id": obj.get("call_id", "")}
    events = []
    if kind == "shellToolCall":
        events.append("beforeShellExecution")
        fields["command"] = args.get("command", "")
    elif kind == "mcpToolCall":
        events.append("beforeMCPExecution")
        fields["tool_name"] = args.get("toolName", "")
    events.append("preToolUse")
    fields["tool_input"] = args
    return events, fields


def _run_hooks(line: bytes, log: str, workspace: str) -> None:
    events, fields = _hook_events(line)
    if not events:
        return
    try:
        with open(os.path.join(workspace, ".cursor", "hooks.json"), encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    for event in events:
        for entry in (hooks or {}).get(event) or []:
            command = entry.get("command") if isinstance(entry, dict) else None
            if not isinstance(command, str):
                continue
            payload = json.dumps({"hook_event_name": event, **fields}).encode()
            done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, cwd=workspace)
            try:
                answer = json.loads(done.stdout)
            except ValueError:
                answer = None
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"event": event, "command": command, "answer": answer}) + "\n")


def _play(
    lines: list[bytes], replay: dict[str, list[str]], prompt: str, host: Host | None = None, workspace: str = ""
) -> int:
    die = int(replay["die-after"][-1]) if "die-after" in replay else -1
    hang = int(replay["hang-after"][-1]) if "hang-after" in replay else -1
    gates = {int(k): v for k, _, v in (g.partition("=") for g in replay.get("gate", []))}
    if any(not re.search(w, prompt) for w in replay.get("gate-when", [])):
        gates = {}
    if any(re.search(w, prompt) for w in replay.get("fail-when", [])):
        sys.stdout.buffer.write(lines[0] + b"\n")
        sys.stdout.flush()
        sys.stderr.write("error: the model request failed\n")
        return 1
    out = sys.stdout.buffer
    lock = threading.Lock()

    def emit(line: bytes) -> None:
        with lock:
            out.write(line + b"\n")
            out.flush()

    ended = False
    n = -1
    while n + 1 < len(lines):
        n += 1
        line = lines[n]
        if n in gates:
            with open(gates[n], "rb") as gate:
                gate.read()
        if n == die:
            os.kill(os.getpid(), signal.SIGKILL)
        if n == hang:
            threading.Event().wait()
        emit(line)
        ended = ended or _terminal(line)
        for path in replay.get("run-hooks", []):
            _run_hooks(line, path, workspace)
        if n == 0 and host is not None:
            rest = host(emit)
            if rest is None:
                return 1
            lines[1:] = rest
    if len(lines) == die:
        os.kill(os.getpid(), signal.SIGKILL)
    if len(lines) == hang:
        threading.Event().wait()
    if ended:
        return 0
    sys.stderr.write("replay: the recording ended without a result line\n")
    return int(replay["exit"][-1]) if "exit" in replay else 1


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if "--version" in args:
        print(VERSION)
        return 0
    try:
        if not args:
            raise Usage("usage: python -m adaptor_nb.testing._cursor_replay RECORDING [options] [CLI arguments]")
        recording, rest = args[0], args[1:]
        if rest[:1] == ["models"] or recording == "models":
            print("Available models\n\n" + "\n".join(MODELS))
            return 0
        replay, cli = _split(rest)
        flags = _parse_cli(cli)
        _check(replay, flags)
    except Usage as exc:
        sys.stderr.write(f"{exc}\n")
        return 1 if str(exc).startswith("error:") or "stdin" in str(exc) else 2
    prompt = sys.stdin.buffer.read().decode("utf-8", "replace")
    for path in replay.get("log", []):
        entry = {
            "argv": cli,
            "prompt": prompt,
            "cwd": os.getcwd(),
            "api_key": bool(os.environ.get("CURSOR_API_KEY")),
            "mcp_json": _project_mcp(flags),
        }
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry) + "\n")
    if not prompt.strip():
        sys.stderr.write("error: no prompt given on stdin\n")
        return 1
    for text in replay.get("stderr", []):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
    for pair in replay.get("on-resume", []):
        sid, _, path = pair.partition("=")
        if flags.get("--resume") == sid:
            recording = path
    lines = _answer_lines(prompt, flags) if recording == "@answer" else _load(recording)
    calls = replay.get("call-host") and all(re.search(w, prompt) for w in replay.get("call-host-when", []))
    host = _host_step(replay, flags, prompt, recording, lines) if calls and lines else None
    try:
        return _play(lines, replay, prompt, host, flags.get("--workspace", ""))
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
