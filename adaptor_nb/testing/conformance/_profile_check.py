"""The conformance check for skills and profiles: what a driver declares (a profile folder, a skills folder, or
neither) is what it does."""

from __future__ import annotations

import os

from adaptor_nb import ConfigError, profile, skill
from adaptor_nb.driver import ProfileAware

from ._cases import ModelRun
from ._harness import _Harness, _success
from ._verdicts import _expect, _fail

_KEY = "conformance-skill"
_SKILL = skill.Inline(_KEY, "Answer plainly.", description="A skill the conformance suite installs")


def _is_dir(path: str) -> bool:
    return os.path.isdir(path)


def _is_file(path: str) -> bool:
    return os.path.isfile(path)


def _listing(folder: str) -> set[str]:
    out: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, name), folder))
    return out


async def check_skills_and_profiles(h: _Harness) -> str | None:
    """Without a declared profile folder, skills reach the prompt and private profiles are refused; with one, a
    private profile gets the skill as ``<skills_dir>/<key>/SKILL.md``, the CLI runs in it, and close() removes it."""
    reply = "Conformance answer about skills."
    agent = await h.start(ModelRun(reply=reply))
    driver = agent.driver
    if not isinstance(driver, ProfileAware):
        out = await h.run(agent.send(h.prompt(0), skills=[_SKILL]))
        _success(out, "a run with an inline skill")
        snap = await agent.inspect().skills()
        _expect(
            snap.materialization.value == "prompt_injected",
            f"skills of a driver without a skills folder should be prompt-injected, got {snap.materialization.value}",
        )
        try:
            await h.start(ModelRun(reply=reply), profile=profile.Dedicated())
        except ConfigError as exc:
            _expect(exc.option == "profile", f"a refused profile= names option {exc.option!r}")
        else:
            _fail("profile=Dedicated() was accepted by a driver that declares no profile folder")
        return "no profile folder declared: skills prompt-injected, private profiles refused"
    layout = driver.profile_layout()
    _expect(bool(layout.env_var), "profile_layout().env_var is empty")
    _expect(
        not os.path.isabs(layout.skills_dir) and ".." not in layout.skills_dir.split("/"),
        f"profile_layout().skills_dir {layout.skills_dir!r} must be a relative folder inside the profile",
    )
    selection: profile.Selection = profile.CloneFrom(layout.configured_dir, profile.CopySettings(), profile.CopyAuth())
    if not _is_dir(layout.configured_dir):
        selection = profile.Dedicated()
    agent = await h.start(ModelRun(reply=reply), profile=selection, skills=[_SKILL])
    await agent.sync_profile()
    folder = (await agent.profile_state()).profile.directory
    _expect(bool(folder) and _is_dir(folder), "the private profile folder was not created before launch")
    before = _listing(folder)
    out = await h.run(agent.send(h.prompt(0)))
    _success(out, "a run in a private profile")
    if layout.skills_dir:
        path = os.path.join(folder, layout.skills_dir, _KEY, "SKILL.md")
        _expect(_is_file(path), f"the skill was not installed as {path}")
    written = _listing(folder) - before
    _expect(
        bool(written),
        f"the CLI wrote nothing into its private profile folder: does the driver pass {layout.env_var} to it?",
    )
    await agent.close()
    _expect(not _is_dir(folder), "agent.close() left the private profile folder behind")
    return f"private profile via {layout.env_var}; the CLI wrote {len(written)} entries there"
