"""A stdio JSON-RPC peer that writes whatever lines a request asks for, standing in for a misbehaving app-server.

Each request's ``params.lines`` are written to stdout as they are, with ``@ID@`` replaced by the request's id; a
request without lines gets no answer at all.
"""

from __future__ import annotations

import json
import sys

for raw in sys.stdin:
    msg = json.loads(raw)
    rid = msg.get("id")
    if rid is None:
        continue
    for line in (msg.get("params") or {}).get("lines", []):
        sys.stdout.write(line.replace("@ID@", json.dumps(rid)) + "\n")
    sys.stdout.flush()
