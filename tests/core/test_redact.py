"""The run's redaction as streams: any cut of a secret across pieces is found, and little is held back."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from adaptor_nb import Event, TextDelta, ToolCall
from adaptor_nb._core._redact import REDACTED, Redaction
from adaptor_nb._core._redact_frames import mask_chunks

SECRETS = ["sk-abcdef123456", "abcdef", "tok_zzzzzzzzzz"]
ALPHABET = "sk-abcdef123456tok_z x"


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def _expected(text: str) -> str:
    for secret in sorted(SECRETS, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


@given(st.text(alphabet=ALPHABET, max_size=80), st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_a_stream_redacts_whatever_the_cuts_and_holds_back_less_than_a_secret(text: str, cuts: list[int]) -> None:
    r = Redaction(SECRETS)
    out = []
    for piece in _pieces(text, cuts):
        out.append(r.stdout.feed(piece.encode()).decode())
        assert len(r.stdout.held) < max(len(s) for s in SECRETS)
    out.append(r.stdout.flush().decode())
    joined = "".join(out)
    assert all(s not in joined for s in SECRETS), (text, joined)
    if not any(s in text for s in SECRETS):
        assert joined == text  # nothing else changes, and nothing held back is lost
    else:
        assert joined == _expected(text) or REDACTED in joined


def test_every_cut_of_a_secret_in_text_deltas_is_redacted() -> None:
    secret = SECRETS[0]
    for i in range(1, len(secret)):
        r = Redaction([secret])
        events: list[Event] = []
        for piece in (f"a {secret[:i]}", f"{secret[i:]} b"):
            events += r.event(TextDelta(text=piece, message_id="m"))
        events += r.flush()
        text = "".join(e.text for e in events if isinstance(e, TextDelta))
        assert text == f"a {REDACTED} b", (i, text)


def test_tool_input_and_other_fields_are_redacted() -> None:
    r = Redaction(["sk-abcdef123456"])
    (call,) = r.event(ToolCall(id="t", name="Bash", args={"cmd": "echo sk-abcdef123456"}, args_delta=""))
    assert isinstance(call, ToolCall) and call.args == {"cmd": f"echo {REDACTED}"}


def test_chunks_of_a_text_stream_are_masked_where_a_secret_spans_them() -> None:
    assert mask_chunks(["warn sk-abc", "def123456\n", "ok"], ["sk-abcdef123456"]) == ["warn <redacted>", "\n", "ok"]
