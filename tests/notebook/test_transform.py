"""The input transformer that turns %%agent cells into awaiting cells."""

from __future__ import annotations

import ast

from adaptor_nb.notebook._transform import rewrite


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_cell_magic_becomes_one_awaited_call() -> None:
    out = rewrite(lines("%%agent --thread t\nFix {name}\nsecond line\n"))
    assert len(out) == 1
    call = ast.parse(out[0], mode="exec").body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Await)
    args = [ast.literal_eval(a) for a in call.value.value.args]  # type: ignore[attr-defined]
    assert args == ["--thread t", "Fix {name}\nsecond line\n"]


def test_leading_blank_lines_are_skipped() -> None:
    out = rewrite(lines("\n\n%%agent\nhi\n"))
    assert out[0].startswith("await ") and "run_cell('', 'hi\\n')" in out[0]


def test_help_and_other_magics_are_left_to_ipython() -> None:
    for text in ("%%agent?\n", "%%agent??\n", "%%agents\nx\n", "%%time\nx = 1\n", "x = 1\n", "%agent?\n"):
        assert rewrite(lines(text)) == lines(text)


def test_a_cell_of_agent_lines_awaits_each() -> None:
    out = rewrite(lines("# setup\n%agent use reference\n\n%agent threads\n"))
    assert out[0] == "# setup\n"
    assert "run_line('use reference')" in out[1] and out[1].startswith("await ")
    assert "run_line('threads')" in out[3]


def test_agent_lines_mixed_with_code_are_left_alone() -> None:
    text = "%agent status\nx = 1\n"
    assert rewrite(lines(text)) == lines(text)


def test_a_cell_typed_by_hand_waits_for_its_body_in_the_completeness_check() -> None:
    # Terminal IPython asks whether the input is complete at each Enter: an %%agent line alone must not run yet.
    from IPython.core.inputtransformer2 import TransformerManager

    manager = TransformerManager()
    manager.cleanup_transforms.insert(0, rewrite)
    assert manager.check_complete("%%agent --thread t\n")[0] == "incomplete"
    assert manager.check_complete("%%agent --thread t\nsummarise the table\n")[0] == "incomplete"
    assert manager.check_complete("%%agent --thread t\nsummarise the table\n\n")[0] == "complete"
    assert "run_cell('--thread t', 'summarise the table\\n')" in manager.transform_cell(
        "%%agent --thread t\nsummarise the table\n"
    )
