"""``%agent record PATH [--mode none|once|rewrite]``, ``%agent record off`` and ``%agent record``.

The notebook's agent runs then go through the cassette at PATH (relative to the kernel's working directory,
which is the notebook's folder): replayed when recorded, recorded per the mode. ``$ADAPTOR_NB_RECORD_MODE``
(which the pytest option ``--agent-record-mode`` sets) wins over ``--mode``, so CI can force ``none`` and a
maintainer can force ``rewrite`` without editing the notebook. What is printed is the same on every run.
"""

from __future__ import annotations

from ._args import OptionError, _Parser

USAGE = "%agent record PATH [--mode none|once|rewrite] | %agent record off | %agent record"


def _parser() -> _Parser:
    parser = _Parser(prog="%agent record", add_help=False)
    parser.add_argument("path", nargs="?")
    parser.add_argument("--mode", default=None)
    return parser


def record_command(words: list[str]) -> str:
    """Do what ``%agent record ...`` asks and return the line to print."""
    from ..cassette import _cassette as cassette

    args = _parser().parse_args(words)
    if args.path is None:
        current = cassette.active()
        if current is None:
            return "no cassette: agent runs go to their CLIs (start one with " + USAGE.split(" | ")[0] + ")"
        return f"cassette {current.path.name} (mode {current.mode}, {len(current.recordings)} recorded runs)"
    if args.path == "off":
        stopped = cassette.stop()
        if stopped is None:
            return "no cassette was active"
        return f"cassette {stopped.path.name} closed"
    try:
        mode = cassette.env_mode(cassette.check_mode(args.mode, "--mode") if args.mode else "none")
        started = cassette.use(args.path, mode)
    except (ValueError, OSError) as exc:
        raise OptionError(f"%agent record: {exc}") from None
    what = {
        "none": "replayed from it (a run it has no recording of fails)",
        "once": "replayed from it, and recorded into it when missing",
        "rewrite": "recorded into it afresh",
    }[mode]
    return f"agent runs are {what}: {started.path.name}, mode {mode}"
