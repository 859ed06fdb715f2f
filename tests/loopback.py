"""A model served on the loopback interface: what every fake Chat Completions endpoint of
the tests (and of tests/stress.py) does the same way.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

Server = TypeVar("Server", bound=ThreadingHTTPServer)


@contextlib.contextmanager
def serving(server: Server) -> Iterator[Server]:
    """Serve in a thread for the block; then stop, and join every handler thread."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chat_completion(content: str | None, model: str) -> dict[str, Any]:
    """A minimal Chat Completions reply body."""
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


def send(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    content_type: str = "application/json",
) -> None:
    """Answer the request being handled."""
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
    except OSError:
        pass  # the client gave up (it timed out); nothing is left to tell it
