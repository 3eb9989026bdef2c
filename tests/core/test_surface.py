"""The public surface by audience: one home per name, moved names with a deprecation path, docs/api.md in step."""

import importlib
import json
import subprocess
import sys

import pytest

from .surface import DOC, DRIVERS, TESTS, USERS, generated_part, render, surface

# Names that left the top level, and their new home.
MOVED = {
    "RunAttachment": "adaptor_nb.services",
    "RunEventSource": "adaptor_nb.services",
    "RunServiceProvider": "adaptor_nb.services",
    "with_meta": "adaptor_nb.driver",
}

DOORS = {"adaptor_nb": USERS, "adaptor_nb.driver": DRIVERS, "adaptor_nb.testing": TESTS}


def _fresh(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout


def test_docs_api_md_lists_the_surface_the_tables_declare() -> None:
    # After changing a name table: PYTHONPATH=. .venv/bin/python tests/core/surface.py
    assert generated_part(DOC.read_text()) == render()


def test_each_public_name_has_one_home_and_an_audience() -> None:
    entries = surface()
    homes = [(e.name, e.home) for e in entries]
    assert len(homes) == len(set(homes))
    index = {(e.name, e.home): e for e in entries}
    for name, home in MOVED.items():
        assert index[name, home].audience == DOORS.get(home, USERS)
        assert (name, "adaptor_nb") not in index
    for entry in entries:
        assert entry.audience in (USERS, DRIVERS, TESTS), entry
        assert entry.summary, entry


def test_the_three_doors_never_bind_one_name_to_two_objects() -> None:
    seen: dict[str, object] = {}
    for door in DOORS:
        module = importlib.import_module(door)
        for name in module.__all__:
            value = getattr(module, name)
            assert seen.setdefault(name, value) is value, f"{door}.{name} differs from another door's {name}"


def test_moved_names_are_listed_only_at_their_new_home() -> None:
    import adaptor_nb

    for name, home in MOVED.items():
        assert name not in adaptor_nb.__all__
        assert name in importlib.import_module(home).__all__


def test_a_moved_name_still_imports_from_the_old_place_warning_once_with_the_new_home() -> None:
    code = f"""
import importlib, json, warnings
moved = {MOVED!r}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import adaptor_nb
    values = {{}}
    for name in moved:
        first = getattr(adaptor_nb, name)
        exec(f"from adaptor_nb import {{name}} as again")
        values[name] = (first, getattr(adaptor_nb, name), again)
report = {{}}
for name, home in moved.items():
    new = getattr(importlib.import_module(home), name)
    mine = [w for w in caught if f"adaptor_nb.{{name}} " in str(w.message)]
    report[name] = {{
        "same": all(v is new for v in values[name]),
        "warnings": [(w.category.__name__, str(w.message), w.filename) for w in mine],
    }}
print(json.dumps(report))
"""
    report = json.loads(_fresh(code))
    for name, home in MOVED.items():
        assert report[name]["same"], name
        [(category, message, filename)] = report[name]["warnings"]
        assert category == "DeprecationWarning"
        assert f"{home}.{name}" in message and f"import it from {home}" in message
        assert filename == "<string>"  # the warning points at the importing code


def test_moved_classes_report_their_new_home_as_module() -> None:
    for first in ("adaptor_nb._core._services", "adaptor_nb.services._providers"):
        code = f"import {first}; from adaptor_nb.services import _providers as m;" + (
            "print(m.RunAttachment.__module__, m.RunServiceProvider.__module__)"
        )
        assert _fresh(code).split() == ["adaptor_nb.services"] * 2, first


def test_public_classes_pickle_by_their_public_path_whichever_module_was_imported_first() -> None:
    code = """
import pickle
from adaptor_nb._result import Usage
from adaptor_nb.services._providers import RunAttachment
from adaptor_nb._errors import RunCancelled
for obj in (Usage(input_tokens=3), RunAttachment(preamble="p")):
    data = pickle.dumps(obj)
    assert pickle.loads(data) == obj, obj
    assert b"adaptor_nb._" not in data and b"_providers" not in data, data
print(repr(RunCancelled), repr(Usage))
"""
    assert _fresh(code).split() == ["<class", "'adaptor_nb.RunCancelled'>", "<class", "'adaptor_nb.Usage'>"]


def test_the_name_tables_of_the_vocabulary_packages_resolve() -> None:
    for package in ("adaptor_nb.skill", "adaptor_nb.profile", "adaptor_nb.services", "adaptor_nb.workspace"):
        count = _fresh(f"import {package} as m; [getattr(m, n) for n in m.__all__]; print(len(m.__all__))")
        assert int(count) == len(importlib.import_module(package).__all__)


# Modules an Agent over the Claude driver does not need until it runs, inspects, keeps a thread, or uses a profile,
# a skill, a workspace or a service.
NOT_AT_CONSTRUCTION = (
    "adaptor_nb._core._execution",
    "adaptor_nb._core._profile",
    "adaptor_nb._core._workspace",
    "adaptor_nb._inspect",
    "adaptor_nb.skill._refs",
    "adaptor_nb.skill._archive",
    "adaptor_nb.profile._selection",
    "adaptor_nb.workspace._specs",
    "adaptor_nb.services._specs",
    "adaptor_nb.threadstore._memory",
    "adaptor_nb.driver._process",
    "adaptor_nb.driver._standin",
    "adaptor_nb.driver._claude_family._run",
    "adaptor_nb.driver._claude_family._process",
    "adaptor_nb.driver._claude_family._decode",
    "difflib",
    "msgspec",
    "psutil",
    "shutil",
    "secrets",
    "tarfile",
    "tomllib",
    "urllib.parse",
    "zipfile",
)


@pytest.mark.parametrize("construct", [False, True])
def test_building_an_agent_loads_nothing_it_needs_only_to_run(construct: bool) -> None:
    code = (
        "import sys; from adaptor_nb import Agent; from adaptor_nb.drivers import claude;"
        + ("Agent(claude.Driver());" if construct else "")
        + f"print(' '.join(m for m in {NOT_AT_CONSTRUCTION!r} if m in sys.modules))"
    )
    assert _fresh(code).split() == []


def test_options_that_need_the_profile_machinery_still_load_it_at_construction(tmp_path: object) -> None:
    code = (
        "import sys; from adaptor_nb import Agent, ConfigError; from adaptor_nb.drivers import claude\n"
        "try:\n    Agent(claude.Driver(), skill_provider=object())\nexcept ConfigError as e:\n    print(e.option)\n"
        "print('adaptor_nb._core._profile' in sys.modules)"
    )
    assert _fresh(code).split() == ["skill_provider", "True"]
