"""The bridge is optional: adaptor_nb never imports it unless asked, and a missing extra names itself."""

import subprocess
import sys

BRIDGE_MODULES = ("adaptor_nb.bridges", "adaptor_nb.bridges.agui", "ag_ui", "starlette", "uvicorn", "sse_starlette")


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_import_and_a_run_without_the_bridge_load_none_of_it() -> None:
    code = (
        "import asyncio, sys, adaptor_nb\n"
        "from adaptor_nb.drivers import reference as ref\n"
        "async def main():\n"
        "    agent = adaptor_nb.Agent(ref.Driver())\n"
        "    await agent.thread('k').send('hi')\n"
        "    await agent.close()\n"
        "asyncio.run(main())\n"
        f"print(' '.join(m for m in {BRIDGE_MODULES!r} if m in sys.modules))"
    )
    out = _fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []


def test_using_the_bridge_without_the_extra_names_the_extra() -> None:
    code = (
        "import sys\nsys.modules['ag_ui'] = None\n"
        "try:\n    from adaptor_nb.bridges import agui\nexcept ImportError as e:\n    print(e)\n"
    )
    out = _fresh(code)
    assert "adaptor_nb[agui]" in out.stdout and "ag-ui-protocol" in out.stdout, out.stdout + out.stderr
