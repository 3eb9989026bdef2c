"""Runtime services (§12): the ServiceManager protocol, ServiceSpec / ServiceRef and the LocalServices manager."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "LocalServices": "._local",
    "ServiceManager": "._specs",
    "ServiceRef": "._specs",
    "ServiceRequest": "._specs",
    "ServiceSpec": "._specs",
}

if TYPE_CHECKING:
    from ._local import LocalServices as LocalServices
    from ._specs import ServiceManager as ServiceManager
    from ._specs import ServiceRef as ServiceRef
    from ._specs import ServiceRequest as ServiceRequest
    from ._specs import ServiceSpec as ServiceSpec

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
