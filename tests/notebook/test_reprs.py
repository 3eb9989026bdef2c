"""Result reprs and DataFrames, and the HTML-safety of every renderer of agent text."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from adaptor_nb import Agent, Result, Usage
from adaptor_nb._views._markdown import render
from adaptor_nb.drivers.reference import Driver, Text, ToolUse, Turn, scenario
from adaptor_nb.notebook._reprs import result_html

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = (
    "Hi <img src=x onerror=alert(1)> <script>alert(2)</script> "
    "[click](javascript:alert(3)) [ok](https://example.org/?a=1&b=2) **bold** `<b>code</b>`"
)


class Finding(BaseModel):
    file: str
    line: int


async def test_structured_list_becomes_a_frame() -> None:
    agent = Agent(Driver())
    result = await agent.send("find issues", schema=list[Finding]).result()
    assert [f.line for f in result.decode(list[Finding])] == [1, 2, 3]
    frame = result.to_pandas()
    assert list(frame.columns) == ["file", "line"] and len(frame) == 3
    assert frame["line"].tolist() == [1, 2, 3]
    await agent.close()


async def test_transcript_frame_has_one_row_per_item() -> None:
    agent = Agent(Driver(scenario=scenario(Turn(Text("look"), ToolUse("Read", {"p": 1}, {"output": "x"})))))
    result = await agent.send("go").result()
    frame = result.transcript_frame()
    assert frame["kind"].tolist() == ["text", "tool_use", "tool_result"]
    assert frame.loc[1, "tool_name"] == "Read" and frame.loc[1, "input"] == {"p": 1}
    await agent.close()


def test_structured_frame_of_one_record_and_no_structure() -> None:
    one = Result(text="", _structured={"a": 1}, _has_structured=True)
    assert one.to_pandas().to_dict("records") == [{"a": 1}]
    with pytest.raises(ValueError, match="no structured output"):
        Result(text="plain words").to_pandas()
    assert Result(text='[{"a": 2}]').to_pandas().to_dict("records") == [{"a": 2}]


def test_markdown_repr_carries_no_live_html() -> None:
    result = Result(text=HOSTILE, turns=1, provider="reference", model="m", usage=Usage(3, 4))
    md = result._repr_markdown_()
    assert "<img" not in md and "<script" not in md and "javascript:" not in md
    assert "&lt;img src=x onerror=alert(1)&gt;" in md
    assert "[ok](https://example.org/?a=1&amp;b=2)" in md
    assert md.endswith("*reference · m · 1 turn · 3 in / 4 out tokens*")


def test_structured_output_shows_as_json_in_both_reprs() -> None:
    result = Result(text="{}", _structured={"k": "<v>"}, _has_structured=True)
    assert '```json\n{\n  "k": "<v>"\n}\n```' in result._repr_markdown_()
    assert "&lt;v&gt;" in result_html(result)


def test_html_repr_escapes_everything_and_keeps_only_http_links() -> None:
    out = result_html(Result(text=HOSTILE))
    assert "<img" not in out and "<script" not in out and "javascript" not in out
    assert '<a href="https://example.org/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer nofollow">ok</a>' in out
    assert "<strong>bold</strong>" in out and "<code>&lt;b&gt;code&lt;/b&gt;</code>" in out


def test_python_markdown_blocks() -> None:
    out = render("# Title\n\n- a\n- b\n\n1. x\n\n```\n<tag>\n```\n> quote")
    assert out == (
        "<h1>Title</h1><ul><li>a</li><li>b</li></ul><ol><li>x</li></ol>"
        "<pre><code>&lt;tag&gt;</code></pre><blockquote>quote</blockquote>"
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_widget_markdown_matches_the_python_renderer_and_is_inert() -> None:
    script = (
        "import(process.argv[1]).then(m => process.stdout.write(JSON.stringify("
        "JSON.parse(process.argv[2]).map(s => m.markdown(s)))))"
    )
    samples = [HOSTILE, "# Title\n\n- a\n- b\n\n1. x\n\n```\n<tag>\n```\n> quote", "<a href='javascript:x'>y</a>"]
    widget = ROOT / "adaptor_nb" / "_views" / "static" / "widget.js"
    out = subprocess.run(
        ["node", "--input-type=module", "-e", script, widget.as_uri(), json.dumps(samples)],
        capture_output=True,
        text=True,
        check=True,
    )
    rendered = json.loads(out.stdout)
    assert rendered == [render(s) for s in samples]
    assert "<img" not in rendered[0] and "<script" not in rendered[0] and "javascript" not in rendered[0]


def test_static_widget_files_are_built_from_js() -> None:
    check = subprocess.run([sys.executable, str(ROOT / "js" / "build.py"), "--check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
