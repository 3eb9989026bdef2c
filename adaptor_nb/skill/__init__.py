"""Skills for ``skills=[...]``: reusable know-how the CLI reads as ``SKILL.md`` folders.

Example::

    from adaptor_nb import skill
    review = skill.Inline("review-checklist", "Check tests, naming and error handling.", description="Code review")
    agent = Agent(driver, skills=[review, skill.Dir("skills/sql-style"), skill.Archive("team-skills/lint.zip")])

Skills append across scopes (Agent defaults, then each call); two different skills with one key fail with
SkillKeyConflictError. A plain string is a bare key resolved by ``skill_provider=`` (for example ``skill.Set``).
Everything is resolved and materialized before the CLI starts; a failure is a ``Skill*Error`` naming the skill.
"""

from __future__ import annotations

from ._archive import ArchiveLimits
from ._materializer import DefaultMaterializer, MaterializedSkill, Materializer, new_default_materializer
from ._provider import Catalog, CatalogEntry, Provider, Set
from ._refs import FS, Archive, Dir, Inline, Key, Ref, Require, Source

__all__ = [
    "FS",
    "Archive",
    "ArchiveLimits",
    "Catalog",
    "CatalogEntry",
    "DefaultMaterializer",
    "Dir",
    "Inline",
    "Key",
    "MaterializedSkill",
    "Materializer",
    "Provider",
    "Ref",
    "Require",
    "Set",
    "Source",
    "new_default_materializer",
]
