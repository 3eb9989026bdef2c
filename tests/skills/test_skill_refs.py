"""Skill references, merge rules across scopes and the errors that name the skill, before anything starts."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import pytest

from adaptor_nb import (
    Agent,
    SkillKeyConflictError,
    SkillKeyMissingError,
    SkillNotFoundError,
    SkillSourceMissingError,
    skill,
)
from skills._drivers import FolderCLI, Recording


def write_skill(folder: Path, name: str, body: str = "Follow the checklist.") -> Path:
    d = folder / name
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Use it for {name}\n---\n\n{body}\n")
    return d


def test_keys_come_from_arguments_or_names(tmp_path: Path) -> None:
    assert skill.Inline("review", "x").key == "review"
    assert skill.Dir(tmp_path / "sql-style").key == "sql-style"
    assert skill.Archive(tmp_path / "lint.tar.gz").key == "lint"
    assert skill.Archive(tmp_path / "lint.zip", key="other").key == "other"
    assert skill.Key("k").key == "k" and skill.Require("k").key == "k"
    for bad in ("", "../up", "a/b", ".hidden", "x" * 65):
        with pytest.raises(SkillKeyMissingError):
            skill.Inline(bad, "body")


def test_inline_repr_hides_the_body() -> None:
    assert "secret" not in repr(skill.Inline("k", "a secret body"))


async def test_inline_skill_is_put_into_the_prompt_for_a_driver_without_a_skills_folder() -> None:
    driver = Recording()
    agent = Agent(driver, skills=[skill.Inline("review-checklist", "Check the tests first.", description="Review")])
    await agent.send("go")
    inst = driver.invocations[-1].instructions
    assert '<skill name="review-checklist"' in inst and "Check the tests first." in inst
    snap = await agent.inspect().skills()
    assert snap.materialization.value == "prompt_injected"
    assert snap.keys() == ["review-checklist"] and snap.warnings
    await agent.close()


async def test_skills_append_across_scopes_and_a_duplicate_key_fails_before_launch() -> None:
    driver = Recording()
    agent = Agent(driver, skills=[skill.Inline("a", "alpha")])
    await agent.send("go", skills=[skill.Inline("b", "beta")])
    assert "alpha" in driver.invocations[-1].instructions and "beta" in driver.invocations[-1].instructions
    stream = agent.send("go", skills=[skill.Inline("a", "another alpha")])
    with pytest.raises(SkillKeyConflictError) as info:
        await stream.result()
    assert "'a'" in str(info.value) and info.value.option == "skills"
    assert len(driver.invocations) == 1  # nothing started for the failed run
    await agent.close()


async def test_missing_sources_and_unknown_keys_name_the_skill(tmp_path: Path) -> None:
    driver = Recording()
    agent = Agent(driver)
    cases: list[tuple[object, type[Exception]]] = [
        (skill.Dir(tmp_path / "nowhere"), SkillSourceMissingError),
        (skill.Archive(tmp_path / "gone.zip"), SkillSourceMissingError),
        ("unknown-key", SkillNotFoundError),
        (skill.Require("not-installed"), SkillNotFoundError),
    ]
    for ref, error in cases:
        with pytest.raises(error) as info:
            await agent.send("go", skills=[ref]).result()
        key = ref if isinstance(ref, str) else getattr(ref, "key")  # noqa: B009
        assert repr(key) in str(info.value)
        assert info.value.details["skill"] == key  # type: ignore[attr-defined]
    assert driver.invocations == []
    await agent.close()


async def test_a_provider_resolves_bare_keys_and_lists_its_catalogue(tmp_path: Path) -> None:
    sql = write_skill(tmp_path / "lib", "sql-style", "Use upper-case keywords.")
    provider = skill.Set(
        skill.Dir(sql), skill.Inline("review", "Look for missing tests.", description="Review"), catalog=True
    )
    driver = Recording()
    agent = Agent(driver, skill_provider=provider, skills=["sql-style"])
    await agent.send("go")
    assert "upper-case keywords" in driver.invocations[-1].instructions
    assert "missing tests" not in driver.invocations[-1].instructions
    snap = await agent.inspect().skills()
    assert {(s.key, s.source) for s in snap.skills} == {("sql-style", "dir"), ("review", "catalog")}
    await agent.close()


async def test_select_skills_installs_a_selection_and_unknown_keys_leave_it_unchanged() -> None:
    provider = skill.Set(skill.Inline("review", "Look for missing tests."), skill.Inline("style", "Short names."))
    driver = Recording()
    agent = Agent(driver, skill_provider=provider)
    snap = await agent.select_skills(["review"])
    assert [s.key for s in snap.skills if s.selected] == ["review"]
    with pytest.raises(SkillNotFoundError):
        await agent.select_skills(["style", "nope"])
    await agent.send("go")
    inst = driver.invocations[-1].instructions
    assert "missing tests" in inst and "Short names" not in inst
    await agent.close()


async def test_fs_skills_come_from_package_resources(tmp_path: Path) -> None:
    root = importlib.resources.files("skills") / "data" / "tidy-notebook"
    driver = Recording()
    agent = Agent(driver, skills=[skill.FS(root)])
    await agent.send("go")
    assert "Restart and run all" in driver.invocations[-1].instructions
    await agent.close()


async def test_skills_land_as_folders_in_a_profile_and_leave_with_close(home: Path) -> None:
    driver = FolderCLI(str(home))
    (home / ".fake" / "skills").mkdir(parents=True)
    write_skill(home / ".fake" / "skills", "mine")  # the user's own skill: never touched
    agent = Agent(driver, skills=[skill.Inline("review", "Look for missing tests.")])
    await agent.send("go")
    assert driver.seen[-1] == (str(home / ".fake"), ["mine", "review"])
    assert driver.invocations[-1].instructions == ""  # native: not in the prompt
    state = await agent.profile_state()
    skills = state.resources[0]
    assert skills.managed == ("review",) and skills.external == ("mine",)
    assert skills.materialization.value == "native_managed" and state.kind.value == "shared"
    await agent.close()
    assert sorted(p.name for p in (home / ".fake" / "skills").iterdir()) == ["mine"]


async def test_a_skill_never_replaces_a_folder_it_did_not_write(home: Path) -> None:
    from adaptor_nb import SkillMaterializationFailedError

    write_skill(home / ".fake" / "skills", "review", "The user's own review skill.")
    agent = Agent(FolderCLI(str(home)), skills=[skill.Inline("review", "ours")])
    with pytest.raises(SkillMaterializationFailedError) as info:
        await agent.send("go").result()
    assert "'review'" in str(info.value)
    assert "The user's own" in (home / ".fake" / "skills" / "review" / "SKILL.md").read_text()
    await agent.close()
