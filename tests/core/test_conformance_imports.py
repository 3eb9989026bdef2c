"""The conformance suite reaches the core only through its public names, as a third-party suite would."""

from __future__ import annotations

import ast
from pathlib import Path

import adaptor_nb.testing.conformance as conformance

PUBLIC = {"adaptor_nb", "adaptor_nb.driver", "adaptor_nb.drivers", "adaptor_nb.drivers.reference"}


def test_the_conformance_modules_import_only_public_core_names() -> None:
    found: list[str] = []
    for path in sorted(Path(conformance.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("adaptor_nb"):
                if node.module not in PUBLIC:
                    found.append(f"{path.name}: from {node.module} import ...")
            elif isinstance(node, ast.ImportFrom) and node.level > 1:
                found.append(f"{path.name}: relative import above the package ({'.' * node.level}{node.module})")
            elif isinstance(node, ast.Import):
                found += [f"{path.name}: import {a.name}" for a in node.names if a.name.startswith("adaptor_nb.")]
    assert found == []
