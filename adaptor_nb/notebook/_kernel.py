"""Whether the running kernel can block an ``%%agent`` cell while widget messages still arrive."""

from __future__ import annotations

from typing import Any

MIN_IPYKERNEL = (7, 4)


def kernel_problem(shell: Any) -> str:
    """Why this kernel cannot run blocking ``%%agent`` cells with live widgets, or "" when it can."""
    if getattr(shell, "kernel", None) is None:
        return ""
    try:
        import ipykernel
    except ImportError:
        return ""
    version = str(getattr(ipykernel, "__version__", "0"))
    parts: list[int] = []
    for piece in version.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    if tuple(parts) >= MIN_IPYKERNEL:
        return ""
    return (
        f"%%agent needs ipykernel>=7.4 so that a running cell still receives widget clicks; this kernel has "
        f"ipykernel {version}. Upgrade it (pip install -U 'ipykernel>=7.4') and restart the kernel."
    )
