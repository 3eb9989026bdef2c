import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import adaptor_nb

PACKAGE = Path(adaptor_nb.__file__).parent

EXPECTED_PUBLIC = {
    "APPROVALS_AUTO_APPROVE", "APPROVALS_AUTO_DENY", "AdaptorError", "Agent", "AgentClosedError", "AgentFailed",
    "ApprovalDenied", "ApprovalError", "ApprovalExpiredError", "ApprovalKind", "ApprovalKindMismatchError",
    "ApprovalMode", "ApprovalPolicy", "ApprovalRequest", "ApprovalResolvedError", "ApprovalTimeout",
    "ApprovalUnavailableError", "Author", "AuthorKind", "Checkpoint", "Choice", "ConfigError", "Decision", "Descriptor",
    "Done", "Driver", "Dropped", "Event", "EventMeta", "EventSourceMeta", "FailureReason", "FallbackAction",
    "FeatureLevel", "HumanDecisionModeUnsupportedError", "Identity", "InvalidDriverConfigError",
    "InvalidMCPConfigError", "InvalidOutputSchemaError", "InvalidPolicyError", "LimitExceeded",
    "MCPTransportUnsupportedError",
    "MCPUnsupportedError", "MessageContext", "MessageError", "MessageFailure", "MessageOutcome", "MessagePolicy",
    "MessageState", "MessageUnsupportedError", "MessageUpdate", "Notice", "NoticeKind", "Origin", "POLICY_READ_ONLY",
    "POLICY_UNRESTRICTED", "POLICY_WORKSPACE_WRITE", "Phase", "Policy", "PolicyCapabilityUnsupportedError",
    "PolicyViolation", "ProcessInfo", "ProcessKind", "QuestionMode", "RawStreams", "Result", "ResumeRejectedError",
    "Role", "RunCancelled", "RunError", "RunFinished", "RunFinishedError", "RunStarted", "Runner", "SandboxLevel",
    "ServiceReport", "SkillError", "SkillKeyConflictError", "SkillKeyMissingError", "SkillMaterializationFailedError",
    "SkillNotFoundError", "SkillSourceMissingError", "Standby", "Stream", "StructuredOutputUnsupportedError",
    "SubagentKind", "SubagentResult", "SubagentUpdate", "TerminalPayload", "TextDelta", "Thinking", "Thread",
    "ThreadAlreadyExistsError", "ThreadBusyError", "ThreadCheckpointMissingError", "ThreadError",
    "ThreadIncompatibleError", "ThreadLeaseLostError", "ThreadNotFoundError", "Timing", "ToolCall", "ToolResult",
    "TranscriptItem", "TranscriptMessage", "TurnEnd", "Usage", "approve_all", "compose_results", "deny_all",
    "load_ipython_extension", "run_as", "run_sync", "unload_ipython_extension",
    "AgentCloseError", "AgentOptions", "RunOptions", "SendOptions", "message_attributes",
    "AgentOption", "AgentSettings", "CallOption", "RunSettings", "identity_from_context",
    "EnvironmentReport", "EnvironmentStatus",
    "map_rows", "map_rows_sync",
    "AgentProfile", "Availability", "ConfigSchema", "EnvironmentCheck", "Inspector", "ModelInfo", "ProfileKind",
    "ProfileSnapshot", "QuotaReport", "ResourceSnapshot", "SkillInfo", "SkillSnapshot",
    "DriverManagedWorkspace", "GitWorktreeWorkspace", "GitWorktrees", "SharedWorkspace", "WorkspaceError",
    "WorkspaceLease", "WorkspaceManager", "WorkspaceReleaseMode", "WorkspaceRequest",
    "LocalServices", "ServiceManager", "ServiceRef", "ServiceRequest", "ServiceSpec",
    "CapabilityEnd", "CapabilityStart", "PlanItem", "PlanUpdate",
}  # fmt: skip


def test_all_is_exactly_the_expected_public_names() -> None:
    assert set(adaptor_nb.__all__) == EXPECTED_PUBLIC
    assert adaptor_nb.__all__ == sorted(adaptor_nb.__all__)


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
        "heavy = ('pydantic', 'jsonschema', 'pandas', 'ipywidgets', 'anywidget', 'mcp', 'uvicorn');"
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


PACKAGES = ["adaptor_nb", "adaptor_nb.threadstore", "adaptor_nb.notebook", "adaptor_nb.driver", "adaptor_nb.testing"]


def _declared_names(init: Path) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """The ``_PUBLIC`` table, the TYPE_CHECKING imports (as the same kind of table) and the module's own defs."""
    tree = ast.parse(init.read_text())
    table: dict[str, str] = {}
    typed: dict[str, str] = {}
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id == "_PUBLIC" for t in targets):
                assert node.value is not None
                table = ast.literal_eval(node.value)
            defined.update(t.id for t in targets if isinstance(t, ast.Name) and not t.id.startswith("_"))
        elif isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            defined.add(node.name)
        elif isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.unparse(imp)
                module = "." * imp.level + (imp.module or "")
                for alias in imp.names:
                    public = alias.asname or alias.name
                    # `X as X` is the explicit re-export form type checkers need.
                    assert alias.asname is not None, f"{init}: write `{alias.name} as {public}`"
                    if module == "." and public == alias.name:
                        continue  # a submodule (``from . import mcp as mcp``)
                    from_package = imp.module is None  # ``from .. import mcp``: an attribute of the package
                    plain = alias.name == public and not from_package
                    typed[public] = module if plain else f"{module}:{alias.name}"
    return table, typed, defined


@pytest.mark.parametrize(
    "package",
    [*PACKAGES, "adaptor_nb.services", "adaptor_nb.workspace", "adaptor_nb.skill", "adaptor_nb.profile"],
)
def test_the_name_table_the_type_checking_imports_and_all_agree(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__file__ is not None
    table, typed, defined = _declared_names(Path(module.__file__))
    assert table, f"{package} has no _PUBLIC table"
    assert typed == table
    assert module.__all__ == sorted({*table, *defined})


@pytest.mark.parametrize(
    "package",
    [*PACKAGES, "adaptor_nb.services", "adaptor_nb.workspace", "adaptor_nb.skill", "adaptor_nb.profile"],
)
def test_every_public_name_resolves_in_a_fresh_interpreter(package: str) -> None:
    code = f"import {package} as m; [getattr(m, n) for n in m.__all__]; print(len(m.__all__))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == len(importlib.import_module(package).__all__)


def _public_classes_by_module() -> dict[str, list[str]]:
    table, _, _ = _declared_names(PACKAGE / "__init__.py")
    out: dict[str, list[str]] = {}
    for name, module in sorted(table.items()):
        if module.startswith("._") and isinstance(getattr(adaptor_nb, name), type):
            out.setdefault(module, []).append(name)
    return out


@pytest.mark.parametrize(("module", "names"), sorted(_public_classes_by_module().items()))
def test_each_public_class_reports_adaptor_nb_when_its_private_module_is_imported_first(
    module: str, names: list[str]
) -> None:
    # A fresh interpreter that imports the defining module before anything touches the package's names.
    code = f"import adaptor_nb.{module[1:]} as m; print(' '.join(getattr(m, n).__module__ for n in {names!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert dict(zip(names, out.stdout.split(), strict=True)) == dict.fromkeys(names, "adaptor_nb")
    assert {n: getattr(adaptor_nb, n).__module__ for n in names} == dict.fromkeys(names, "adaptor_nb")


def test_unknown_names_raise_attribute_error_and_dir_lists_the_public_names() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = adaptor_nb.no_such_name  # type: ignore[attr-defined]
    assert set(adaptor_nb.__all__) <= set(dir(adaptor_nb))
    assert "mcp" in dir(adaptor_nb)
    assert adaptor_nb.mcp.__name__ == "adaptor_nb.mcp"
