"""Structured extraction over DataFrame rows: ``map_rows`` runs one agent run per row.

``DaskExecutor`` (the ``adaptor_nb[dask]`` extra) runs the rows on a Dask cluster's workers. Importing this
package imports neither pandas nor dask; they load when a batch starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._naming import lazy_exports

_PUBLIC: dict[str, str] = {
    "DaskExecutor": "._dask",
    "Executor": "._executor",
    "InKernelExecutor": "._executor",
    "RowSettings": "._executor",
    "Batch": "._map",
    "BatchFailed": "._map",
    "map_rows": "._map",
    "map_rows_sync": "._map",
    "Progress": "._progress",
    "RowJob": "._row",
    "RowOutcome": "._row",
}

if TYPE_CHECKING:
    from ._dask import DaskExecutor as DaskExecutor
    from ._executor import Executor as Executor
    from ._executor import InKernelExecutor as InKernelExecutor
    from ._executor import RowSettings as RowSettings
    from ._map import Batch as Batch
    from ._map import BatchFailed as BatchFailed
    from ._map import map_rows as map_rows
    from ._map import map_rows_sync as map_rows_sync
    from ._progress import Progress as Progress
    from ._row import RowJob as RowJob
    from ._row import RowOutcome as RowOutcome

__getattr__, __dir__, __all__ = lazy_exports(__name__, globals(), _PUBLIC)
