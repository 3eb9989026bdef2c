"""Runtime services (§12): the ServiceManager protocol, ServiceSpec / ServiceRef, the LocalServices manager, and the
protocol of run service providers (``run_services=[...]``: RunServiceProvider, RunAttachment, RunEventSource)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "LocalServices": "._local",
    "RunAttachment": "._providers",
    "RunEventSource": "._providers",
    "RunServiceProvider": "._providers",
    "ServiceManager": "._specs",
    "ServiceRef": "._specs",
    "ServiceRequest": "._specs",
    "ServiceSpec": "._specs",
}

if TYPE_CHECKING:
    from ._local import LocalServices as LocalServices
    from ._providers import RunAttachment as RunAttachment
    from ._providers import RunEventSource as RunEventSource
    from ._providers import RunServiceProvider as RunServiceProvider
    from ._specs import ServiceManager as ServiceManager
    from ._specs import ServiceRef as ServiceRef
    from ._specs import ServiceRequest as ServiceRequest
    from ._specs import ServiceSpec as ServiceSpec

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC, public_module=__name__)
