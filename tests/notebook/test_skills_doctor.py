"""``%%agent --skill``, ``%agent skills`` and ``%agent doctor`` in a real kernel."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .kernel import Kernel

ROOT = Path(__file__).resolve().parents[2]
CLI_BIN = ROOT / ".cache" / "npm" / "node_modules" / ".bin"


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    """A kernel with both CLIs on PATH, an empty HOME and no API key of any kind."""
    home = tmp_path / "home"
    home.mkdir()
    blank = {
        key: ""
        for key in os.environ
        if key.endswith(("_API_KEY", "_AUTH_TOKEN", "_OAUTH_TOKEN")) or key.startswith("CLAUDE_CODE_USE_")
    }
    env = {
        **blank,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "PATH": f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    k = Kernel(tmp_path, env)
    try:
        k.run_ok("%load_ext adaptor_nb")
        yield k
    finally:
        k.shutdown()
        assert not k.km.is_alive()


def test_skill_option_takes_a_folder_and_an_unknown_key_fails_naming_it(kernel: Kernel, tmp_path: Path) -> None:
    folder = tmp_path / "review-checklist"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: review-checklist\ndescription: Review for tests\n---\nCheck tests.\n")
    kernel.run_ok(f"%%agent --driver reference --quiet --skill {folder}\nhello")
    listed = kernel.run_ok("%agent skills").text()
    assert "reference: prompt_injected" in listed
    assert "review-checklist (dir) - Review for tests" in listed
    bad = kernel.run("%%agent --driver reference --quiet --skill no-such-skill\nhello")
    assert bad.status == "error" and "SkillNotFoundError" in bad.text() and "'no-such-skill'" in bad.text()


@pytest.mark.skipif(not (CLI_BIN / "claude").exists(), reason="the pinned Claude CLI is not installed")
def test_doctor_reports_every_installed_driver(kernel: Kernel) -> None:
    text = kernel.run_ok("%agent doctor").text()
    assert text.startswith("adaptor_nb doctor:") or "adaptor_nb doctor:" in text
    claude = text[text.index("claude:") :]
    assert "version 2." in claude and "auth source: none found" in claude
    assert "to use it: set ANTHROPIC_API_KEY" in claude
    reference = text[text.index("reference:") :]
    assert "models: the driver cannot list them" in reference
    assert "quota: driver 'reference' has no quota probe" in reference
    assert "profile: default (shared) at no profile folder" in reference


@pytest.mark.skipif(not (CLI_BIN / "claude").exists(), reason="the pinned Claude CLI is not installed")
def test_doctor_lists_models_and_the_profile_of_a_usable_driver(tmp_path: Path) -> None:
    from adaptor_nb.testing._anthropic import FakeAnthropicServer

    secret = "sk-ant-doctor-secret-0123456789"
    home = tmp_path / "home"
    (home / ".claude" / "skills" / "team-review").mkdir(parents=True)
    (home / ".claude" / "skills" / "team-review" / "SKILL.md").write_text(
        "---\nname: team-review\ndescription: the team's review\n---\nbody\n"
    )
    with FakeAnthropicServer() as fake:
        env = {
            "HOME": str(home),
            "PATH": f"{CLI_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_API_KEY": secret,
            "ANTHROPIC_BASE_URL": fake.url,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "OPENAI_API_KEY": "",
            "CODEX_API_KEY": "",
            "ADAPTOR_NB_THREAD_STORE": str(tmp_path / "threads.adaptor_nb.sqlite"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        k = Kernel(tmp_path, env)
        try:
            k.run_ok("%load_ext adaptor_nb")
            text = k.run_ok("%agent doctor").text()
        finally:
            k.shutdown()
        assert fake.model_requests == []  # the doctor starts no model task
    claude = text[text.index("claude:") : text.index("codex:")]
    assert "usable" in claude and "auth source: ANTHROPIC_API_KEY" in claude
    assert "models: " in claude and "the driver cannot list them" not in claude
    assert f"profile: default (shared) at {home / '.claude'}" in claude
    assert "skills in the profile: team-review" in claude
    assert secret not in text
