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

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "Archive": "._refs",
    "ArchiveLimits": "._archive",
    "Catalog": "._provider",
    "CatalogEntry": "._provider",
    "DefaultMaterializer": "._materializer",
    "Dir": "._refs",
    "FS": "._refs",
    "Inline": "._refs",
    "Key": "._refs",
    "MaterializedSkill": "._materializer",
    "Materializer": "._materializer",
    "Provider": "._provider",
    "Ref": "._refs",
    "Require": "._refs",
    "Set": "._provider",
    "Source": "._refs",
    "new_default_materializer": "._materializer",
}

if TYPE_CHECKING:
    from ._archive import ArchiveLimits as ArchiveLimits
    from ._materializer import DefaultMaterializer as DefaultMaterializer
    from ._materializer import MaterializedSkill as MaterializedSkill
    from ._materializer import Materializer as Materializer
    from ._materializer import new_default_materializer as new_default_materializer
    from ._provider import Catalog as Catalog
    from ._provider import CatalogEntry as CatalogEntry
    from ._provider import Provider as Provider
    from ._provider import Set as Set
    from ._refs import FS as FS
    from ._refs import Archive as Archive
    from ._refs import Dir as Dir
    from ._refs import Inline as Inline
    from ._refs import Key as Key
    from ._refs import Ref as Ref
    from ._refs import Require as Require
    from ._refs import Source as Source

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
