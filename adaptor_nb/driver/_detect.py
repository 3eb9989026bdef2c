"""The model a CLI's own configuration selects (for ModelDetector): the ``model`` key of its settings file."""

from __future__ import annotations

import json
import os
from typing import Any

from ._profile import ProfileLayout


def configured_model(layout: ProfileLayout) -> str:
    """The ``model`` of ``layout``'s configuration file in its configured folder ("" when it names none or cannot be
    read). ``.toml`` files are read as TOML, anything else as JSON."""
    if not layout.config_file or not layout.configured_dir:
        return ""
    path = os.path.join(layout.configured_dir, layout.config_file)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(1 << 20)
        if path.endswith(".toml"):
            import tomllib  # loads only when a TOML configuration is read

            doc: Any = tomllib.loads(raw.decode())
        else:
            doc = json.loads(raw)
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    model = doc.get("model") if isinstance(doc, dict) else None
    return model.strip() if isinstance(model, str) else ""
