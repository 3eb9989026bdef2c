"""Every ``%%agent`` option value is checked before the view appears; the error is one plain sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from .kernel import Kernel


@pytest.mark.parametrize(
    ("setup", "option", "expected"),
    [
        ("", "--schema 42", "--schema 42 is 42, not a schema; it must be a pydantic model"),
        ("bad = {'type': 'nonsense'}", "--schema bad", "not a valid JSON Schema: at $.type, 'nonsense' is not valid"),
        (
            "bad = {'type': 'object', 'properties': {'a': {'type': 'strin'}}}",
            "--schema bad",
            "at $.properties.a.type, 'strin' is not valid",
        ),
        ("", "--schema object()", "(object) cannot be turned into a JSON Schema"),
    ],
)
def test_a_bad_schema_is_a_usage_error_before_any_view(kernel: Kernel, setup: str, option: str, expected: str) -> None:
    if setup:
        kernel.run_ok(setup)
    cell = kernel.run(f"%%agent {option}\nList the files")
    assert cell.status == "error"
    text = cell.text()
    assert text.startswith("UsageError: ") and expected in text
    assert "\n" not in text.strip() and "Failed validating" not in text and "pydantic" not in text.split("must be")[0]
    assert kernel.run_views() == []


def test_a_good_schema_dict_still_runs(kernel: Kernel) -> None:
    kernel.run_ok("good = {'type': 'object', 'properties': {'a': {'type': 'string'}}}")
    cell = kernel.run("%%agent --schema good --quiet\nList the files")
    assert "UsageError" not in cell.text()


def test_everything_kept_for_a_notebook_is_in_one_ignored_folder(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {
        "ADAPTOR_NB_DRIVER": "reference",
        "JPY_SESSION_NAME": str(work / "review.ipynb"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    kernel = Kernel(work, env)
    try:
        kernel.run_ok("%load_ext adaptor_nb")
        kernel.run_ok("%%agent --thread t1 --quiet\nList the files")
        status = kernel.run_ok("%agent status").text()
    finally:
        kernel.shutdown()
    beside = sorted(p.name for p in work.iterdir() if p.name != "kernel-ipc" and not p.name.startswith("kernel-"))
    assert beside == [".adaptor_nb"]
    folder = work / ".adaptor_nb"
    assert (folder / "review.sqlite").is_file() and (folder / "review-reference").is_dir()
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert str(folder / "review.sqlite") in status


def test_quiet_builds_no_view_and_opens_no_comm(kernel: Kernel) -> None:
    before = dict(kernel.comm_messages)
    kernel.run_ok("%%agent --quiet --out res\nList the files")
    assert kernel.run_views() == [] and kernel.comm_messages == before
    assert kernel.run_ok("print(type(res).__name__, bool(res.text))").text().split() == ["Result", "True"]
    failed = kernel.run("%%agent --quiet --out res --agent nobody\nList the files")
    assert failed.status == "error" and "no variable named 'nobody'" in failed.text()
