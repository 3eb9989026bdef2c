"""Fixtures for the workspace tests: a real repository with one commit, the fake model servers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adaptor_nb.testing import FakeOpenAIServer
from adaptor_nb.testing._anthropic import FakeAnthropicServer

from .gitrepo import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj", {"README.md": "base\n", "src/app.py": "print('hi')\n"})


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
async def openai() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server
