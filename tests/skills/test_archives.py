"""Skill archives: zip, tar and tgz unpack into the target and nowhere else; a hostile corpus (zip slip,
absolute paths, symlink swap, hard links, devices, bombs, deep and long paths) built here is refused with an
error naming the skill, and hypothesis throws arbitrary member names and sizes at the extractor."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adaptor_nb import SkillMaterializationFailedError, skill
from adaptor_nb.skill._archive import ArchiveLimits, ArchiveRefused, extract

SKILL_MD = b"---\nname: lint\ndescription: Lint rules\n---\n\nRun the linter before you commit.\n"


def make_zip(path: Path, members: list[tuple[str, bytes]], *, modes: dict[str, int] | None = None) -> Path:
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        warnings.simplefilter("ignore")  # duplicate names are part of the hostile corpus
        for name, data in members:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            mode = (modes or {}).get(name)
            if mode is not None:
                info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:  # type: ignore[call-overload]
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size = len(m[1])
                tf.addfile(info, io.BytesIO(m[1]))
    return path


def tar_link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def materialize(archive: Path, target: Path, limits: ArchiveLimits | None = None) -> skill.MaterializedSkill:
    target.mkdir(parents=True, exist_ok=True)
    return skill.DefaultMaterializer(limits).materialize(skill.Archive(archive, key="lint"), str(target))


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("kind", ["zip", "tar", "tgz"])
def test_good_archives_unpack_with_skill_md_at_the_root_or_in_one_folder(tmp_path: Path, kind: str) -> None:
    members = [("lint/SKILL.md", SKILL_MD), ("lint/rules/style.txt", b"no tabs\n")]
    if kind == "zip":
        archive = make_zip(tmp_path / "lint.zip", members)
    else:
        archive = make_tar(tmp_path / f"lint.{kind}", list(members), "w" if kind == "tar" else "w:gz")
    m = materialize(archive, tmp_path / "out")
    assert files_under(tmp_path / "out") == {"SKILL.md", "rules", "rules/style.txt"}
    assert m.key == "lint" and m.description == "Lint rules" and m.source == "archive"


def test_the_front_matter_name_is_set_to_the_key(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "x.zip", [("SKILL.md", SKILL_MD.replace(b"name: lint", b"name: other"))])
    m = skill.DefaultMaterializer().materialize(skill.Archive(archive, key="renamed"), str(_mk(tmp_path / "o")))
    text = (tmp_path / "o" / "SKILL.md").read_text()
    assert "name: renamed" in text and "description: Lint rules" in text and m.key == "renamed"


def _mk(p: Path) -> Path:
    p.mkdir()
    return p


HOSTILE_ZIPS: dict[str, list[tuple[str, bytes]]] = {
    "zip slip": [("SKILL.md", SKILL_MD), ("../../escaped.txt", b"pwned")],
    "nested slip": [("SKILL.md", SKILL_MD), ("a/../../escaped.txt", b"pwned")],
    "absolute path": [("SKILL.md", SKILL_MD), ("/tmp/escaped.txt", b"pwned")],
    "windows drive": [("SKILL.md", SKILL_MD), ("C:/escaped.txt", b"pwned")],
    "backslash slip": [("SKILL.md", SKILL_MD), ("..\\..\\escaped.txt", b"pwned")],
    "duplicate member": [("SKILL.md", SKILL_MD), ("SKILL.md", b"second")],
    "file as folder": [("SKILL.md", SKILL_MD), ("x", b"file"), ("x/y", b"under a file")],
    "no skill file": [("README.md", b"hello")],
}


@pytest.mark.parametrize("case", sorted(HOSTILE_ZIPS))
def test_hostile_zips_are_refused_and_write_nothing_outside(tmp_path: Path, case: str) -> None:
    archive = make_zip(tmp_path / "lint.zip", HOSTILE_ZIPS[case])
    with pytest.raises(SkillMaterializationFailedError) as info:
        materialize(archive, tmp_path / "deep" / "out")
    assert "'lint'" in str(info.value) and info.value.details["skill"] == "lint"
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "deep" / "escaped.txt").exists()
    assert not Path("/tmp/escaped.txt").exists()


def test_a_zip_symlink_member_is_refused(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "lint.zip",
        [("SKILL.md", SKILL_MD), ("link", b"/etc")],
        modes={"link": stat.S_IFLNK | 0o777},
    )
    with pytest.raises(SkillMaterializationFailedError, match="symbolic link"):
        materialize(archive, tmp_path / "out")


def test_symlink_swap_in_a_tar_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    archive = make_tar(
        tmp_path / "lint.tgz",
        [("SKILL.md", SKILL_MD), tar_link("d", str(outside)), ("d/planted.txt", b"pwned")],
    )
    with pytest.raises(SkillMaterializationFailedError, match="link"):
        materialize(archive, tmp_path / "out")
    assert list(outside.iterdir()) == []
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize(
    "member",
    [
        tar_link("hard", "/etc/passwd", tarfile.LNKTYPE),
        tar_link("dev", "", tarfile.CHRTYPE),
        tar_link("blk", "", tarfile.BLKTYPE),
        tar_link("fifo", "", tarfile.FIFOTYPE),
    ],
    ids=["hard link", "char device", "block device", "fifo"],
)
def test_links_and_devices_in_tars_are_refused(tmp_path: Path, member: tarfile.TarInfo) -> None:
    archive = make_tar(tmp_path / "lint.tar", [("SKILL.md", SKILL_MD), member], "w")
    with pytest.raises(SkillMaterializationFailedError):
        materialize(archive, tmp_path / "out")


def test_a_zip_bomb_is_stopped_by_the_size_limit(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "lint.zip", [("SKILL.md", SKILL_MD), ("bomb.bin", b"\0" * (4 * 1024 * 1024))])
    assert archive.stat().st_size < 64 * 1024  # compresses well: a bomb
    with pytest.raises(SkillMaterializationFailedError, match=r"more than|larger than"):
        materialize(archive, tmp_path / "out", ArchiveLimits(max_total_bytes=1024 * 1024, max_file_bytes=1024 * 1024))


def test_a_zip_lying_about_its_size_is_stopped_while_inflating(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "lint.zip", [("SKILL.md", SKILL_MD), ("bomb.bin", b"\0" * 200_000)])
    data = bytearray(archive.read_bytes())
    # Patch the declared uncompressed size of bomb.bin (local header and central directory) down to 10 bytes.
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        start = 0
        while (i := data.find(sig, start)) >= 0:
            name_len_at = i + (26 if sig == b"PK\x03\x04" else 28)
            name_len = int.from_bytes(data[name_len_at : name_len_at + 2], "little")
            name_at = i + (30 if sig == b"PK\x03\x04" else 46)
            if data[name_at : name_at + name_len] == b"bomb.bin":
                data[i + offset : i + offset + 4] = (10).to_bytes(4, "little")
            start = i + 4
    archive.write_bytes(bytes(data))
    with pytest.raises(SkillMaterializationFailedError):
        materialize(archive, tmp_path / "out", ArchiveLimits(max_total_bytes=100_000, max_file_bytes=100_000))
    out = tmp_path / "out"
    assert sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) <= 100_000


def test_too_many_files_too_deep_and_too_long_are_refused(tmp_path: Path) -> None:
    limits = ArchiveLimits(max_files=5, max_depth=3, max_path_length=40)
    many = make_zip(tmp_path / "many.zip", [("SKILL.md", SKILL_MD)] + [(f"f{i}", b"x") for i in range(10)])
    deep = make_zip(tmp_path / "deep.zip", [("SKILL.md", SKILL_MD), ("a/b/c/d/e.txt", b"x")])
    long = make_zip(tmp_path / "long.zip", [("SKILL.md", SKILL_MD), ("n" * 60, b"x")])
    for archive, why in ((many, "more than 5 files"), (deep, "deeper than 3"), (long, "longer than 40")):
        with pytest.raises(SkillMaterializationFailedError, match=why):
            materialize(archive, tmp_path / archive.stem, limits)


def test_not_an_archive_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "lint.zip"
    junk.write_bytes(b"this is not a zip file at all")
    with pytest.raises(SkillMaterializationFailedError, match="cannot be read"):
        materialize(junk, tmp_path / "out")


# -- fuzzing -------------------------------------------------------------------------------------------------

_SEGMENT = st.one_of(
    st.sampled_from(["..", ".", "", "a", "SKILL.md", "~", "C:", "\\..", "..\\x", "x" * 80]),
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\0"), max_size=12),
)
_NAME = st.lists(_SEGMENT, min_size=1, max_size=8).map("/".join) | st.lists(_SEGMENT, max_size=4).map(
    lambda parts: "/" + "/".join(parts)
)


def _inside(root: Path, base: Path) -> None:
    """Nothing was written beside the target, and nothing under it is a link or a special file."""
    assert sorted(p.name for p in base.iterdir()) == ["out"]
    for p in root.rglob("*"):
        mode = p.lstat().st_mode
        assert stat.S_ISREG(mode) or stat.S_ISDIR(mode)
        assert os.path.realpath(p).startswith(str(root.resolve()) + os.sep)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(_NAME, min_size=1, max_size=6), sizes=st.lists(st.integers(0, 3000), min_size=6, max_size=6))
def test_fuzzed_zip_member_names_never_escape(
    tmp_path_factory: pytest.TempPathFactory, names: list[str], sizes: list[int]
) -> None:
    base = tmp_path_factory.mktemp("fz")
    archive = base.parent / f"{base.name}.zip"
    try:
        make_zip(archive, [(n, b"x" * sizes[i]) for i, n in enumerate(names)])
    except (IndexError, ValueError, UnicodeError):
        return  # zipfile itself cannot write that name
    root = base / "out"
    root.mkdir()
    try:
        extract(str(archive), str(root), ArchiveLimits(max_total_bytes=8000, max_path_length=120, max_depth=6))
    except ArchiveRefused:
        pass
    _inside(root, base)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entries=st.lists(
        st.tuples(_NAME, st.sampled_from([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE]), _NAME),
        min_size=1,
        max_size=6,
    )
)
def test_fuzzed_tar_members_never_escape(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[str, bytes, str]]
) -> None:
    base = tmp_path_factory.mktemp("ft")
    archive = base.parent / f"{base.name}.tar"
    members: list[tarfile.TarInfo | tuple[str, bytes]] = []
    for name, kind, link in entries:
        if kind == tarfile.REGTYPE:
            members.append((name, b"data"))
        else:
            members.append(tar_link(name, link, kind))
    try:
        make_tar(archive, members, "w")
    except (ValueError, UnicodeError):
        return  # tarfile itself cannot write that name
    root = base / "out"
    root.mkdir()
    try:
        extract(str(archive), str(root), ArchiveLimits(max_path_length=120, max_depth=6))
    except ArchiveRefused:
        pass
    _inside(root, base)


@pytest.mark.parametrize("kind", ["zip", "tgz"])
@pytest.mark.parametrize("shape", ["distinct", "repeated"])
def test_an_archive_of_twenty_thousand_folders_is_refused_before_one_is_made(
    tmp_path: Path, kind: str, shape: str
) -> None:
    names = [f"d{i}/" if shape == "distinct" else "same/" for i in range(20_000)]
    if kind == "zip":
        archive = make_zip(tmp_path / "folders.zip", [("SKILL.md", SKILL_MD), *((n, b"") for n in names)])
    else:
        folders: list[tarfile.TarInfo | tuple[str, bytes]] = [("SKILL.md", SKILL_MD)]
        for name in names:
            info = tarfile.TarInfo(name.rstrip("/"))
            info.type = tarfile.DIRTYPE
            folders.append(info)
        archive = make_tar(tmp_path / "folders.tgz", folders)
    with pytest.raises(SkillMaterializationFailedError, match="more than 2000 entries"):
        materialize(archive, tmp_path / "out")
    assert files_under(tmp_path / "out") == set()


def test_the_entry_limit_counts_files_and_folders_together(tmp_path: Path) -> None:
    members = [("SKILL.md", SKILL_MD), ("a/", b""), ("b/", b""), ("a/x", b"x")]
    archive = make_zip(tmp_path / "mixed.zip", members)
    with pytest.raises(SkillMaterializationFailedError, match="more than 3 entries"):
        materialize(archive, tmp_path / "out", ArchiveLimits(max_entries=3))
    materialize(archive, tmp_path / "ok", ArchiveLimits(max_entries=4))
    assert files_under(tmp_path / "ok") == {"SKILL.md", "a", "b", "a/x"}
