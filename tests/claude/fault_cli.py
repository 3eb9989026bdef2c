"""A thin wrapper around the real ``claude`` that injects one fault into its output, for fault-path tests.

Usage: ``python fault_cli.py MODE CLAUDE [args...]``. Modes:

* ``nonjson``  — after the CLI's first stdout line, write a line that is not JSON
* ``stderr``   — write 300 lines of noise to stderr before anything else, then relay normally
* ``exit``     — relay until the CLI's ``system/init`` line, then kill it and exit 3 with a message on stderr
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading


def main() -> int:
    mode, argv = sys.argv[1], sys.argv[2:]
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    child_in, child_out = child.stdin, child.stdout

    def pump_in() -> None:
        try:
            for line in sys.stdin.buffer:
                child_in.write(line)
                child_in.flush()
        except (BrokenPipeError, ValueError):
            pass
        finally:
            try:
                child_in.close()
            except OSError:
                pass

    threading.Thread(target=pump_in, daemon=True).start()
    if mode == "stderr":
        for i in range(300):
            sys.stderr.write(f"noise line {i}: the quick brown fox jumps over the lazy dog\n")
        sys.stderr.flush()
    out = sys.stdout.buffer
    first = True
    for line in child_out:
        out.write(line)
        out.flush()
        if first and mode == "nonjson":
            out.write(b"this line is not JSON at all\n")
            out.flush()
        first = False
        if mode == "exit" and b'"subtype":"init"' in line.replace(b" ", b""):
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
            sys.stderr.write("fault_cli: the CLI died unexpectedly\n")
            sys.stderr.flush()
            out.flush()
            os._exit(3)
    out.flush()
    os._exit(child.wait())  # a plain exit could block on the stdin thread at shutdown


if __name__ == "__main__":
    sys.exit(main())
