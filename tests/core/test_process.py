import subprocess
import sys
import textwrap
import time

import psutil

from adaptor_nb.driver import CLIProcess

CHILD = textwrap.dedent(
    """
    import asyncio
    from adaptor_nb.driver import CLIProcess

    async def main():
        proc = await CLIProcess.start(["sleep", "60"])
        print(proc.pid, flush=True)
        # the interpreter now exits without closing the process, as a kernel shut down mid-run would

    asyncio.run(main())
    """
)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_processes_still_running_at_interpreter_exit_are_killed() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=30)
    pid = int(out.stdout.strip())
    try:
        psutil.Process(pid).wait(timeout=10)  # the orphan was killed; wait for the system to finish it
    except (psutil.NoSuchProcess, psutil.TimeoutExpired):
        pass
    assert _gone(pid)


async def test_close_reaps_the_whole_process_group() -> None:
    proc = await CLIProcess.start(["sh", "-c", "sleep 60 & echo ready; sleep 60"])
    group = proc.pid
    assert await proc.readline() == b"ready"  # the background child exists now
    children = psutil.Process(group).children(recursive=True)
    assert children
    await proc.close(grace=0.1, term_wait=1)
    assert proc.returncode is not None
    # SIGKILL is delivered asynchronously: wait (bounded) until each child is dead or a zombie
    deadline = time.monotonic() + 10
    alive = [c for c in children if not _gone(c.pid)]
    while alive and time.monotonic() < deadline:
        psutil.wait_procs(alive, timeout=0.1)
        alive = [c for c in alive if not _gone(c.pid)]
    assert alive == []
    assert group == proc.pid


async def test_lines_of_any_length_are_read_whole() -> None:
    proc = await CLIProcess.start([sys.executable, "-c", "import sys; sys.stdout.write('x' * 5_000_000 + '\\nend\\n')"])
    lines = [line async for line in proc.lines()]
    await proc.close()
    assert [len(line) for line in lines] == [5_000_000, 3]
