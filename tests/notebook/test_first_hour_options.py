"""Every ``%%agent`` option value is checked before the view appears; the error is one plain sentence."""

from __future__ import annotations

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
