"""The vocabulary modules are layered: no import cycle among them, counting imports deferred into functions."""

import ast
from pathlib import Path

import adaptor_nb

PACKAGE = Path(adaptor_nb.__file__).parent
VOCABULARY = (
    "_enums", "_errors", "_events", "_result", "_frames", "_schema", "_policy", "_approvals", "mcp", "_naming",
)  # fmt: skip


def _imports(module: str) -> set[str]:
    """Sibling modules ``module`` imports anywhere in its body, except under ``if TYPE_CHECKING:``."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(a.name for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found & set(VOCABULARY)


def test_no_import_cycle_among_the_vocabulary_modules() -> None:
    graph = {m: _imports(m) for m in VOCABULARY}
    done: set[str] = set()

    def walk(m: str, path: tuple[str, ...]) -> None:
        if m in path:
            raise AssertionError("import cycle: " + " -> ".join((*path[path.index(m) :], m)))
        if m in done:
            return
        for dep in sorted(graph[m]):
            walk(dep, (*path, m))
        done.add(m)

    for m in VOCABULARY:
        walk(m, ())


def test_enums_and_naming_are_the_bottom_layer() -> None:
    assert _imports("_enums") <= {"_naming"}
    assert _imports("_naming") == set()
