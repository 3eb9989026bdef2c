"""Produce adaptor_nb/_views/static/ from js/: drop comment lines and indentation (no Node needed).

Run ``python js/build.py`` after editing js/widget.js or js/widget.css; ``--check`` exits 1 when static/ is stale.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "js"
TARGET = ROOT / "adaptor_nb" / "_views" / "static"


def shrink_js(text: str) -> str:
    """Remove whole-line comments, blank lines and leading indentation; code lines stay as written."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        out.append(stripped)
    return "\n".join(out) + "\n"


def shrink_css(text: str) -> str:
    """Remove comments and collapse whitespace."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    lines = [re.sub(r"\s+", " ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line) + "\n"


def outputs() -> dict[Path, str]:
    """The files static/ should contain."""
    return {
        TARGET / "widget.js": shrink_js((SOURCE / "widget.js").read_text()),
        TARGET / "widget.css": shrink_css((SOURCE / "widget.css").read_text()),
    }


def main(argv: list[str]) -> int:
    stale = [p for p, text in outputs().items() if not p.exists() or p.read_text() != text]
    if "--check" in argv:
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)} (run python js/build.py)")
        return 1 if stale else 0
    for p, text in outputs().items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        print(f"wrote {p.relative_to(ROOT)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
