"""Conformance by clause: every check names its clause, reports carry it, and the committed clause x driver table
of docs/conformance.md covers every clause and driver with no failing cell (each driver's own conformance test
compares its column with a fresh run)."""

from __future__ import annotations

from conformance_table import COLUMNS, committed

from adaptor_nb.drivers import reference
from adaptor_nb.testing import CHECKS, CLAUSES, FAMILIES, run_driver_conformance
from adaptor_nb.testing.conformance import parse_table, render_table, verdicts


def test_every_check_names_one_clause_and_every_family_has_one() -> None:
    assert set(CLAUSES) == set(CHECKS)
    ids = [c.id for c in CLAUSES.values()]
    assert len(ids) == len(set(ids))
    assert {c.family for c in CLAUSES.values()} == set(FAMILIES)
    for family in FAMILIES:
        numbers = sorted(c.number for c in CLAUSES.values() if c.family == family)
        assert numbers == list(range(1, len(numbers) + 1)), family


async def test_reports_carry_clauses_and_checks_can_be_chosen_by_clause() -> None:
    chosen = ["event.1", "descriptor_truthful"]
    report = await run_driver_conformance(reference.Driver, checks=chosen, skip=["config.1"])
    assert [(r.name, r.clause) for r in report.results] == [
        ("event_ordering", "event.1"),
        ("descriptor_truthful", "descriptor.1"),
    ]
    assert report.status("event.1") == "pass" and "event.1 event_ordering" in str(report)


async def test_a_rendered_table_reads_back_as_its_verdicts() -> None:
    report = await run_driver_conformance(reference.Driver, checks=["event.1", "session.1"], skip=["turn.1"])
    cells = parse_table(render_table({"ref": report}))["ref"]
    ran = {clause: cell for clause, cell in cells.items() if cell != "not run"}
    assert ran == verdicts(report) == {"event.1": "pass", "session.1": "pass"}
    assert len(cells) == len(CLAUSES)  # the clauses a report does not cover are there, as "not run"


def test_the_committed_table_covers_every_clause_and_driver_and_no_cell_fails() -> None:
    table = committed()
    assert list(table) == list(COLUMNS)
    wanted = {c.id for c in CLAUSES.values()}
    for column, cells in table.items():
        assert set(cells) == wanted, column
        bad = {clause: cell for clause, cell in cells.items() if cell not in ("pass", "n/a")}
        assert not bad, f"{column}: {bad}"
