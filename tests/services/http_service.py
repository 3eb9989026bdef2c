"""A tiny local service for the tests: serves on the port given, answers GET with the sha256 of $SERVICE_TOKEN,
announces readiness on stdout; with ``--fail`` it prints its token and exits instead."""

from __future__ import annotations

import hashlib
import http.server
import os
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = hashlib.sha256(os.environ.get("SERVICE_TOKEN", "").encode()).hexdigest().encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


def main() -> None:
    if "--fail" in sys.argv:
        print(f"cannot start, token was {os.environ.get('SERVICE_TOKEN', '')}", flush=True)
        sys.exit(3)
    port = int(sys.argv[1])
    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    print(f"service ready on {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
