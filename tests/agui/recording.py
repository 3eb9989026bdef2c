"""Record every response body of an ASGI app to numbered files (the streams the validator reads afterwards)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adaptor_nb.bridges.agui import AguiApp


class Recorder:
    """Wraps an AguiApp; ``files`` lists the recorded 200 responses, in order."""

    def __init__(self, app: AguiApp, directory: Path) -> None:
        self.app = app
        self.directory = directory
        self.files: list[Path] = []

    @property
    def token(self) -> str | None:
        return self.app.token

    @property
    def bridge(self) -> Any:
        return self.app.bridge

    async def aclose(self) -> None:
        await self.app.aclose()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        status = 0

        async def tee(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, tee)
        finally:
            if status == 200:
                path = self.directory / f"{len(self.files) + 1:03d}.sse"
                path.write_bytes(b"".join(chunks))
                self.files.append(path)
