"""LineBuffer: the stdout line splitter every driver reads through, with its bound."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from adaptor_nb.driver import LineBuffer, LineTooLong

LIMIT = 1 << 20


def _split(chunks: list[bytes], limit: int = LIMIT) -> list[bytes]:
    buf = LineBuffer(limit)
    lines: list[bytes] = []
    for chunk in chunks:
        for block in buf.feed(chunk):
            lines.extend(block.split(b"\n"))
    rest = buf.end()
    if rest:
        lines.append(rest)
    return lines


@given(st.lists(st.binary(max_size=64).map(lambda b: b.replace(b"\n", b"")), max_size=30), st.data())
def test_lines_come_out_whole_however_the_stream_is_cut(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert _split([c for c in chunks if c]) == lines


def test_the_line_a_chunk_finishes_comes_as_a_block_of_its_own() -> None:
    buf = LineBuffer(LIMIT)
    assert buf.feed(b"ab") == []
    assert buf.feed(b"c\nd\ne\nf") == [b"abc", b"d\ne"]
    assert buf.feed(b"\n") == [b"f"]
    assert buf.feed(b"g\nh\n") == [b"g\nh"]


def test_an_unfinished_last_line_is_kept_at_eof() -> None:
    assert _split([b"a\nb", b"c"]) == [b"a", b"bc"]


def test_a_line_of_exactly_the_bound_passes_and_one_byte_more_fails() -> None:
    exact = b"x" * LIMIT
    assert _split([exact[: LIMIT // 2], exact[LIMIT // 2 :] + b"\n"]) == [exact]
    with pytest.raises(LineTooLong) as info:
        _split([exact[: LIMIT // 2], exact[LIMIT // 2 :] + b"x\n"])
    assert info.value.limit == LIMIT and info.value.seen == LIMIT + 1
    assert "max_line_bytes" in str(info.value) and "1 MiB" in str(info.value)


def test_a_line_without_a_newline_fails_as_soon_as_it_passes_the_bound() -> None:
    buf = LineBuffer(LIMIT)
    chunk = b"y" * (1 << 16)
    fed = 0
    with pytest.raises(LineTooLong):
        while True:
            buf.feed(chunk)
            fed += len(chunk)
    assert fed == LIMIT  # the chunk that crossed the bound raised; nothing past it was kept
    assert buf.end() == b""
