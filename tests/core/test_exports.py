import importlib

import adaptor_nb


def test_all_names_are_exported_and_importable() -> None:
    for name in adaptor_nb.__all__:
        assert hasattr(adaptor_nb, name), name


def test_all_has_no_duplicates() -> None:
    assert len(adaptor_nb.__all__) == len(set(adaptor_nb.__all__))


def test_public_classes_report_the_public_module() -> None:
    assert adaptor_nb.Agent.__module__ == "adaptor_nb"
    assert adaptor_nb.Thread.__module__ == "adaptor_nb"
    assert adaptor_nb.RunError.__module__ == "adaptor_nb"


def test_expected_core_names_are_public() -> None:
    expected = {
        "Agent", "Thread", "Standby", "Stream", "Result", "Usage", "TextDelta", "Thinking", "ToolCall", "ToolResult",
        "RunStarted", "RunFinished", "MessageUpdate", "TurnEnd", "Done", "ProcessInfo", "Notice", "Dropped",
        "ApprovalRequest", "SubagentUpdate", "Policy", "MessagePolicy", "ApprovalPolicy", "Identity", "Author",
        "run_as", "run_sync", "approve_all", "deny_all", "Origin", "AdaptorError", "RunError", "MessageError",
        "ThreadBusyError", "AgentClosedError", "PolicyCapabilityUnsupportedError", "POLICY_READ_ONLY",
    }  # fmt: skip
    assert expected <= set(adaptor_nb.__all__)


def test_subpackages_have_explicit_public_names() -> None:
    for mod in ("adaptor_nb.driver", "adaptor_nb.threadstore", "adaptor_nb.drivers.reference", "adaptor_nb.testing"):
        m = importlib.import_module(mod)
        assert m.__all__, mod
        for name in m.__all__:
            assert getattr(m, name) is not None, f"{mod}.{name}"


def test_every_error_shares_one_root() -> None:
    for name in adaptor_nb.__all__:
        obj = getattr(adaptor_nb, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, adaptor_nb.AdaptorError), name


def test_importing_the_package_loads_no_heavy_dependencies() -> None:
    import subprocess
    import sys

    code = (
        "import sys, adaptor_nb; from adaptor_nb import Agent, Result;"
        "heavy = ('pydantic', 'jsonschema', 'pandas', 'ipywidgets', 'anywidget');"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_classes_report_the_public_module_even_when_imported_privately() -> None:
    import subprocess
    import sys

    code = (
        "from adaptor_nb._errors import RunCancelled; from adaptor_nb._result import Result;"
        "print(RunCancelled.__module__, Result.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["adaptor_nb", "adaptor_nb"]
