"""The Inspector answers from the captured driver configuration and says "unsupported" where the driver cannot
tell; Native selects the CLI's own folder even when the configuration points elsewhere."""

from __future__ import annotations

from pathlib import Path

from skills._drivers import FolderCLI

from adaptor_nb import Agent, Availability, EnvironmentStatus, profile
from adaptor_nb.driver import ProfileLayout
from adaptor_nb.drivers import reference
from adaptor_nb.notebook._args import parse_cell_line
from adaptor_nb.notebook._skills import skill_ref
from adaptor_nb.skill import Archive, Dir, Key


async def test_reports_say_unsupported_instead_of_guessing() -> None:
    agent = Agent(reference.Driver())
    inspector = agent.inspect()
    env = await inspector.environment()
    assert env.driver == "reference" and env.status is EnvironmentStatus.UNKNOWN
    assert await inspector.models() == []
    quota = await inspector.quota()
    assert quota.status is Availability.UNSUPPORTED and "no quota probe" in quota.detail
    schema = await inspector.config_schema()
    assert schema.status is Availability.UNSUPPORTED and dict(schema.schema) == {}
    assert (await inspector.skills()).skills == ()
    state = await agent.profile_state()
    assert state.kind.value == "shared" and state.profile.identity == "default" and state.profile.directory == ""
    await agent.close()


class Elsewhere(FolderCLI):
    """Configured to use another folder than the CLI's native one."""

    def profile_layout(self) -> ProfileLayout:
        base = super().profile_layout()
        return ProfileLayout(
            driver=base.driver,
            env_var=base.env_var,
            configured_dir=str(Path(self.home) / "configured"),
            native_dir=base.native_dir,
        )


async def test_native_points_the_cli_at_its_own_folder(home: Path) -> None:
    driver = Elsewhere(str(home))
    agent = Agent(driver, profile=profile.Native())
    await agent.send("go")
    assert driver.invocations[-1].env == {"FAKE_PROFILE": str(home / ".fake")}
    await agent.close()
    default = Agent(driver)
    await default.send("go")
    assert driver.invocations[-1].env == {}
    await default.close()


def test_the_skill_option_reads_keys_folders_and_archives(tmp_path: Path) -> None:
    folder = tmp_path / "sql-style"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: sql-style\n---\nx\n")
    archive = tmp_path / "lint.tgz"
    archive.write_bytes(b"")
    assert skill_ref("review") == Key("review")
    assert skill_ref(str(folder)) == Dir(folder)
    assert skill_ref(str(folder / "SKILL.md")) == Dir(folder)
    assert skill_ref(str(archive)) == Archive(archive)
    assert isinstance(skill_ref("./missing/skill"), Dir)
    opts = parse_cell_line(f"--skill review --skill {folder}")
    assert opts.skills == ("review", str(folder))
