"""Skills and profiles on the real Claude Code CLI against the fake Anthropic server: a skill lands as a SKILL.md
folder the CLI lists in its init line and shows the model; a dedicated profile is isolated from the user's HOME
and removed by close()."""

# ruff: noqa: ASYNC240 - the tests look at profile folders on disk between awaits, on purpose

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from adaptor_nb import Notice, profile, skill
from adaptor_nb.testing._anthropic import FakeAnthropicServer, Reply

REVIEW = skill.Inline(
    "review-checklist",
    "Check that every new function has a test.",
    description="Use when reviewing a change for missing tests",
)


def init_skills(events: list[Any]) -> list[str]:
    for e in events:
        if isinstance(e, Notice) and e.metadata.get("code") == "claude.init":
            raw = e.data.get("skills") if isinstance(e.data, dict) else None
            if raw is None:
                raw = e.metadata.get("skills")
            return sorted(str(s) for s in raw or [])
    return []


async def collect(stream: Any) -> list[Any]:
    return [e async for e in stream.events()]


async def test_a_skill_is_listed_in_the_init_line_and_shown_to_the_model(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, home: Path
) -> None:
    fake.enqueue(Reply.text("ok"))
    agent = agent_factory(make_config(bare=False), skills=[REVIEW])
    stream = agent.send("review my change")
    events = await collect(stream)
    assert (await stream.result()).text == "ok"
    assert "review-checklist" in init_skills(events)
    request_text = fake.requests[-1].system_text + fake.requests[-1].text_of_all_messages()
    assert "review-checklist" in request_text and "missing tests" in request_text
    folder = home / ".claude" / "skills" / "review-checklist"
    assert (folder / "SKILL.md").is_file()  # the default (shared) profile of this HOME
    await agent.close()
    assert not folder.exists()


async def test_a_dedicated_profile_is_isolated_from_home_and_removed_by_close(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, home: Path
) -> None:
    user_skill = home / ".claude" / "skills" / "personal"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: personal\ndescription: the user's own skill\n---\nsecret sauce\n")
    before = sorted(str(p) for p in home.rglob("*"))
    fake.enqueue(Reply.text("ok"))
    agent = agent_factory(make_config(bare=False), profile=profile.Dedicated(), skills=[REVIEW])
    stream = agent.send("review my change")
    events = await collect(stream)
    assert (await stream.result()).text == "ok"
    listed = init_skills(events)
    assert "review-checklist" in listed and "personal" not in listed
    assert "personal" not in fake.requests[-1].system_text + fake.requests[-1].text_of_all_messages()
    state = await agent.profile_state()
    folder = state.profile.directory
    assert state.profile.env_var == "CLAUDE_CONFIG_DIR" and os.path.isdir(folder)
    assert os.path.isfile(os.path.join(folder, "skills", "review-checklist", "SKILL.md"))
    await agent.close()
    assert not os.path.exists(folder)
    assert sorted(str(p) for p in home.rglob("*")) == before  # the run wrote nothing into the user's HOME


async def test_a_kept_dedicated_profile_resumes_a_thread_in_a_later_agent(
    agent_factory: Any, make_config: Any, fake: FakeAnthropicServer, tmp_path: Path
) -> None:
    from adaptor_nb.threadstore import MemoryStore

    store = MemoryStore()
    selection = profile.Dedicated("nb", root=tmp_path / "profiles", keep=True)
    fake.enqueue(Reply.text("first"))
    first = agent_factory(make_config(), profile=selection, thread_store=store)
    assert (await first.thread("t").send("remember the word kiwi").result()).text == "first"
    await first.close()
    folder = tmp_path / "profiles" / "claude-nb"
    assert (folder / "projects").is_dir()  # the CLI kept its session in the dedicated profile
    fake.enqueue(Reply.text("second"))
    later = agent_factory(make_config(), profile=selection, thread_store=store)
    assert (await later.thread("t", resume_only=True).send("which word?").result()).text == "second"
    assert "remember the word kiwi" in fake.requests[-1].text_of_all_messages()  # the session was resumed
