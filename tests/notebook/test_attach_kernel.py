"""``%%agent --driver claude --attach ...`` in a real kernel: the figure reaches the model request as a PNG image
block and the DataFrame's head as a text table in the prompt (the real Claude CLI against the fake server)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _support import require_cli

from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .kernel import Kernel

pytestmark = [pytest.mark.slow, pytest.mark.claude]

PLOT = """\
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
fig, ax = plt.subplots(figsize=(2, 1))
ax.bar(["a", "b"], [3, 5])
sales = pd.DataFrame({"region": ["north", "south", "east"], "units": [30, 50, 20]})
"""


def test_a_cell_attaches_the_figure_as_an_image_and_the_dataframe_as_text(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cli = require_cli("claude", "run `bash scripts/setup.sh`")
    home = tmp_path / "home"
    home.mkdir()
    with FakeAnthropicServer() as fake:
        env = {
            "HOME": str(home),
            "PATH": f"{os.path.dirname(cli)}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_API_KEY": "sk-ant-attach-test-0123456789",
            "ANTHROPIC_BASE_URL": fake.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        kernel = Kernel(tmp_path, env)
        try:
            kernel.run_ok("%load_ext adaptor_nb")
            kernel.run_ok(PLOT)
            png = kernel.run_ok(
                "import io; b = io.BytesIO(); fig.savefig(b, format='png', bbox_inches='tight')\n"
                "print(len(b.getvalue()))"
            ).text()
            cell = kernel.run("%%agent --driver claude --attach fig --attach sales\nWhich region? [[say south]]")
            assert cell.status == "ok", cell.text()
            missing = kernel.run("%%agent --driver claude --attach nothing_here\nhi")
            assert missing.status == "error" and "no variable 'nothing_here'" in missing.text()
        finally:
            kernel.shutdown()
        request = fake.message_requests[-1]
    assert request.prompt.startswith("Which region? [[say south]]\n\nDataFrame `sales` (first 3 of 3 rows")
    assert "south" in request.prompt and "50" in request.prompt
    [(media_type, data)] = request.prompt_images
    assert media_type == "image/png" and data[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(len(data)) in png  # the figure as the cell would render it
    assert len(fake.message_requests) == 1  # the cell with a missing variable started no run


def test_a_cell_attaches_a_dataframe_as_a_table_image(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    cli = require_cli("claude", "run `bash scripts/setup.sh`")
    home = tmp_path / "home"
    home.mkdir()
    with FakeAnthropicServer() as fake:
        env = {
            "HOME": str(home),
            "PATH": f"{os.path.dirname(cli)}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_API_KEY": "sk-ant-attach-test-0123456789",
            "ANTHROPIC_BASE_URL": fake.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        kernel = Kernel(tmp_path, env)
        try:
            kernel.run_ok("%load_ext adaptor_nb")
            kernel.run_ok(PLOT)
            cell = kernel.run("%%agent --driver claude --attach sales:image\nWhich region? [[say south]]")
            assert cell.status == "ok", cell.text()
        finally:
            kernel.shutdown()
        request = fake.message_requests[-1]
    assert request.prompt == "Which region? [[say south]]"  # the table went as an image, not as text
    [(media_type, data)] = request.prompt_images
    assert media_type == "image/png" and data[:8] == b"\x89PNG\r\n\x1a\n"
