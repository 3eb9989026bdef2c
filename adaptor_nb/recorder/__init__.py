"""Session recording (§17): a run's events as plain JSONL with their coordinates, and their replay.

``SessionRecorder(path, exposure=ExposurePolicy(...))`` records events; ``replay(path)`` yields them again with
their recorded ``meta`` (run id, thread key, sequence, time, source). Final results keep only run id, turns,
text, summary and error identity unless the ExposurePolicy opts more in; replayed approval requests have no
live responder. The file shares the driver cassette's format (``adaptor_nb.cassette``).
"""

from __future__ import annotations

from ._exposure import ExposurePolicy
from ._recorder import EventRecord, SessionRecorder, areplay, load, replay

__all__ = ["EventRecord", "ExposurePolicy", "SessionRecorder", "areplay", "load", "replay"]
