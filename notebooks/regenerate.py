"""Re-execute the notebooks in place on the offline demo driver, so their stored outputs match what nbval checks.

Run ``.venv/bin/python notebooks/regenerate.py [name ...]`` after editing a notebook.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
NOTEBOOKS = ["quickstart", "threads", "approvals", "structured_output", "live_tool_calls", "batch_extraction", "tools"]


def execute(name: str, store_dir: Path) -> None:
    """Run one notebook top to bottom with a fresh thread store and save it with its outputs and widget state."""
    path = HERE / f"{name}.ipynb"
    book = nbformat.read(path, as_version=4)
    os.environ["ADAPTOR_NB_DRIVER"] = "reference"
    os.environ["ADAPTOR_NB_THREAD_STORE"] = str(store_dir / f"{name}.adaptor_nb.sqlite")
    client = NotebookClient(
        book, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}, store_widget_state=True
    )
    client.execute()
    nbformat.write(book, path)
    print(f"executed {path.relative_to(HERE.parent)}")


def main(names: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or NOTEBOOKS:
            execute(name, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
