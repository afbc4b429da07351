import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.client.static import STATIC


class Quiet(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript",
                      ".mjs": "text/javascript", ".json": "application/json"}

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def static_site():
    """The client's static files alone (no gateway), at this URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(STATIC)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
