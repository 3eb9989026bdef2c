"""No import cycle among the modules of adaptor_nb, deferred imports counted (TYPE_CHECKING ones excepted)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import adaptor_nb
from adaptor_nb._naming import absolute_module, split_target

ROOT = Path(adaptor_nb.__file__).resolve().parent
PACKAGE = "adaptor_nb"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, at any depth, except those in the body of ``if TYPE_CHECKING:``."""
    if isinstance(tree, ast.If) and _is_type_checking(tree.test):
        for child in tree.orelse:
            yield from _nodes(child)
        return
    yield tree
    for child in ast.iter_child_nodes(tree):
        yield from _nodes(child)


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, except those in the body of ``if TYPE_CHECKING:``."""
    return [node for node in _nodes(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _text(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def import_module_names(tree: ast.AST, package: str) -> list[str]:
    """The absolute modules ``importlib.import_module("...")`` / ``import_module(".x", package)`` calls name. An
    f-string counts for the module its literal prefix names (``f"adaptor_nb.drivers.{name}"``: adaptor_nb.drivers)."""
    found: list[str] = []
    for node in _nodes(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "import_module" and node.args):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.JoinedStr):
            head = _text(arg.values[0]) if arg.values else None
            name = (head or "").rpartition(".")[0]
        else:
            name = _text(arg) or ""
        anchor = (_text(node.args[1]) if len(node.args) > 1 else None) or package
        if name:
            found.append(absolute_module(name, anchor))
    return found


def lazy_table(tree: ast.Module) -> tuple[dict[str, str], list[str]]:
    """A package's ``lazy_exports`` name table (public name -> target string) and its ``submodules`` names."""
    assigned: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            assigned[node.target.id] = node.value
    table: dict[str, str] = {}
    submodules: list[str] = []
    for node in _nodes(tree):
        if isinstance(node, ast.Call) and _called(node) == "lazy_exports" and len(node.args) >= 3:
            arg = node.args[2]
            table.update(ast.literal_eval(assigned[arg.id] if isinstance(arg, ast.Name) else arg))
            for keyword in node.keywords:
                if keyword.arg == "submodules":
                    submodules += ast.literal_eval(keyword.value)
    return table, submodules


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it may import: its import statements at any depth (those under ``if
    TYPE_CHECKING:`` excepted), the modules its ``import_module`` calls name and, for a package, the modules its lazy
    name table loads from (the table's module strings and its ``submodules``).

    A name taken from an ancestor package (``from .. import mcp``, a table target ``"..:mcp"``) is an edge to the
    module that name loads from, not to the whole ancestor: Python has run an ancestor before its descendants."""
    modules = _modules()
    trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path)) for name, path in modules.items()}
    tables = {name: lazy_table(trees[name]) for name, path in modules.items() if path.name == "__init__.py"}

    def loads(source: str, attribute: str, importer: str) -> list[str]:
        """The modules ``from source import attribute`` (or the table target ``"source:attribute"``) runs."""
        named: list[str] = []
        if f"{source}.{attribute}" in modules:  # a submodule
            named = [f"{source}.{attribute}"]
        elif attribute in tables.get(source, ({}, []))[0]:
            named = target_modules(source, tables[source][0][attribute])
        if named and importer.startswith(source + "."):
            return named
        return [source, *named]

    def target_modules(package: str, target: str) -> list[str]:
        module, attribute = split_target(target)
        source = absolute_module(module, package)
        return loads(source, attribute, package) if attribute else [source]

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in trees.items():
        package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
        targets: list[str] = []
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
                continue
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                source = f"{prefix}.{node.module}" if node.module else prefix
            else:
                source = node.module or ""
            for alias in node.names:
                targets += [source] if alias.name == "*" else loads(source, alias.name, name)
        targets += import_module_names(tree, package)
        table, submodules = tables.get(name, ({}, []))
        for target in table.values():
            targets += target_modules(name, target)
        targets += [f"{name}.{sub}" for sub in submodules]
        for target in targets:
            # ``import a.b.c`` runs a, a.b and a.b.c; count the deepest module of ours it names.
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = dfs(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = dfs(node)
            if cycle:
                return cycle
    return None


def all_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle for every group of modules that import each other (each strongly connected component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: set[str] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for group in groups:
        sub = {k: graph[k] & group for k in group}
        cycle = find_cycle(sub)
        assert cycle is not None
        cycles.append(cycle)
    return sorted(cycles)


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "adaptor_nb._agent" in graph
    assert "adaptor_nb._core._engine" in graph["adaptor_nb._agent"]
    assert "adaptor_nb.driver._spi" in graph["adaptor_nb._core._execution"]


def test_the_graph_counts_lazy_names_and_import_module_strings() -> None:
    graph = import_graph()
    assert "adaptor_nb.batch._map" in graph["adaptor_nb.batch"]  # the table's "._map"
    assert "adaptor_nb.batch._map" in graph["adaptor_nb"]  # "map_rows": ".batch._map"
    assert "adaptor_nb.batch" in graph["adaptor_nb"]  # submodules=("batch", ...)
    assert "adaptor_nb.drivers" in graph["adaptor_nb.notebook._defaults"]  # import_module(f"adaptor_nb.drivers.{name}")
    # "mcp": "..:mcp" in adaptor_nb.driver loads adaptor_nb.mcp; the root package has run before the door
    assert "adaptor_nb.mcp" in graph["adaptor_nb.driver"]
    assert "adaptor_nb" not in graph["adaptor_nb.driver"]
    tree = ast.parse(
        "import importlib\nif TYPE_CHECKING:\n    importlib.import_module('p.hidden')\n"
        "def f():\n    importlib.import_module('.b', 'p.q')\n    import_module('p.c')\n"
    )
    assert import_module_names(tree, "p") == ["p.q.b", "p.c"]
    table = ast.parse("_T = {'A': '._a', 'B': '..x:B'}\nlazy_exports(__name__, globals(), _T, submodules=('s',))\n")
    assert lazy_table(table) == ({"A": "._a", "B": "..x:B"}, ["s"])


def test_the_detector_finds_a_deferred_cycle(tmp_path: Path) -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": set()}
    assert find_cycle(graph) == ["p.a", "p.b", "p.c", "p.a"]
    tree = ast.parse("if TYPE_CHECKING:\n    import x\ndef f():\n    import y\n")
    assert [n.names[0].name for n in _imports(tree) if isinstance(n, ast.Import)] == ["y"]


def _edges_into(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    inside = [m for m in graph if m == source or m.startswith(source + ".")]
    return [f"{m} -> {t}" for m in inside for t in sorted(graph[m]) if t == target or t.startswith(target + ".")]


def test_the_view_kit_sits_below_notebook_and_batch() -> None:
    graph = import_graph()
    assert not _edges_into(graph, "adaptor_nb.batch", "adaptor_nb.notebook")
    assert not _edges_into(graph, "adaptor_nb._views", "adaptor_nb.notebook")
    assert not _edges_into(graph, "adaptor_nb._views", "adaptor_nb.batch")
    assert _edges_into(graph, "adaptor_nb.batch", "adaptor_nb._views")
    assert _edges_into(graph, "adaptor_nb.notebook", "adaptor_nb._views")


# The vocabulary modules (errors, results, frames, policy, schema, events) were untangled separately; this check,
# which lets a cycle among them pass, is kept beside the whole-package one below.
VOCABULARY = frozenset(
    f"adaptor_nb.{m}" for m in ("_errors", "_result", "_frames", "_policy", "_schema", "_events", "_enums", "_naming")
)


def test_no_import_cycle_outside_the_vocabulary_modules() -> None:
    cycles = [c for c in all_cycles(import_graph()) if not set(c) <= VOCABULARY]
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_no_import_cycle_in_the_package() -> None:
    cycles = all_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
