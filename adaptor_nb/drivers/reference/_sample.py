"""A deterministic example value for a JSON Schema (the reference driver's structured answers).

Given the prompt, the value reads as a plausible answer to it: an enum takes the option the prompt's words point to
(a small table of cue words: "charged" points to "billing", "crashes" to "bug", "how do I" to "question"), and a
field named like ``urgent`` or ``priority`` follows the prompt's urgency words. Without cues, the first option.
"""

from __future__ import annotations

import re
from typing import Any

_CUES: dict[str, tuple[str, ...]] = {
    "bug": ("crash", "closes", "error", "broken", "loop", "fails", "freez", "bug", "sent back"),
    "billing": ("charge", "card", "invoice", "refund", "payment", "price", "bill", "subscription"),
    "question": ("how do", "how can", "is there", "can i", "where", "what is", "?"),
    "feature": ("would like", "please add", "support for", "wish", "feature"),
    "positive": ("love", "great", "thanks", "works well", "happy"),
    "negative": ("hate", "terrible", "angry", "disappointed", "broken"),
}
_URGENT = ("crash", "closes", "cannot", "can't", "twice", "two charges", "loop", "down", "urgent", "immediately")
_URGENCY_FIELDS = re.compile(r"urgent|blocking|critical|escalate")


def _cue_score(option: str, prompt: str) -> int:
    words = (option.lower(), *_CUES.get(option.lower(), ()))
    return sum(prompt.count(w) for w in words)


def _pick(options: list[Any], prompt: str) -> Any:
    """The enum option the prompt's words point to most (the first on a tie or without cues)."""
    if not prompt:
        return options[0]
    scores = [_cue_score(o, prompt) if isinstance(o, str) else 0 for o in options]
    return options[scores.index(max(scores))]


def _urgent(prompt: str) -> bool:
    return any(w in prompt for w in _URGENT)


def sample(
    schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0, *, prompt: str = "", name: str = ""
) -> Any:
    """A small value that satisfies common JSON Schemas (objects, arrays, enums, refs, scalars).

    With ``prompt``, the value is a plausible answer to it (see the module's note); ``name`` is the property the
    value is for."""
    root = root or schema
    prompt = prompt.lower()
    if depth > 8:
        return None
    if "$ref" in schema:
        ref = str(schema["$ref"])
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return sample(node, root, depth + 1, prompt=prompt, name=name)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return _pick(list(schema["enum"]), prompt)
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
            return sample(options[0], root, depth + 1, prompt=prompt, name=name)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else None)
    if t == "object" or "properties" in schema:
        props: dict[str, Any] = schema.get("properties", {})
        return {key: sample(sub, root, depth + 1, prompt=prompt, name=key) for key, sub in props.items()}
    if t == "array":
        n = max(int(schema.get("minItems", 3)), 1)
        n = min(n, int(schema.get("maxItems", n)))
        item = schema.get("items", {})
        return [_vary(sample(item, root, depth + 1, prompt=prompt), i) for i in range(n)]
    if t == "string":
        return "example"
    if t == "integer":
        low = int(schema.get("minimum", 1))
        if prompt and "priorit" in name.lower():  # 1 is the most urgent
            return max(low, min(1 if _urgent(prompt) else 3, int(schema.get("maximum", 3))))
        return low
    if t == "number":
        return float(schema.get("minimum", 1.5))
    if t == "boolean":
        if prompt and _URGENCY_FIELDS.search(name.lower()):
            return _urgent(prompt)
        return True
    if t == "null":
        return None
    return "example"


def _vary(value: Any, i: int) -> Any:
    """Make list items differ a little so tables look like tables."""
    if isinstance(value, dict):
        return {k: _vary(v, i) for k, v in value.items()}
    if isinstance(value, str) and value == "example":
        return f"example {i + 1}"
    if isinstance(value, int) and not isinstance(value, bool):
        return value + i
    if isinstance(value, float):
        return value + i
    return value
