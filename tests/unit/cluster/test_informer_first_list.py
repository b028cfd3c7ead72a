"""The informer waits for its first list while pages keep coming, and says so when they stop.

The API server here is a real HTTP server on loopback serving a paged ResourceSlice list (the list
protocol: ``limit`` and ``continue``); drawb talks to it through its whole REST path.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.informer import Informer
from drawb.cluster.protocol import ClusterError, kind_of

PAGES = 6


class _SlowList(BaseHTTPRequestHandler):
    """Pages of 500 slices (only the first list page is answered at once); ``server.delay_s`` before
    each later page, and none at all from page ``server.stall_at`` on (the request hangs)."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if query.get("watch") == "true":  # a quiet watch, held open until the test ends
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            self.server.released.wait(60)
            try:
                self.wfile.write(b"0\r\n\r\n")
            except OSError:  # drawb closed the watch
                pass
            return
        if query.get("limit") == "1" or not url.path.endswith("/resourceslices"):
            return self._send({"kind": "List", "metadata": {"resourceVersion": "7"}, "items": []})
        page = int(query.get("continue") or 0)
        if page >= self.server.stall_at:
            self.server.released.wait(60)
            self.close_connection = True  # no answer at all: the client's read fails
            return
        if page:
            time.sleep(self.server.delay_s)
        more = page + 1 < PAGES
        self._send({"kind": "ResourceSliceList",
                    "metadata": {"resourceVersion": "7", **({"continue": str(page + 1)} if more else {})},
                    "items": [{"metadata": {"name": f"s-{page}-{i}", "resourceVersion": "7"},
                               "spec": {"driver": "gpu.nvidia.com", "pool": {"name": f"p{page}-{i}"}}}
                              for i in range(500)]})

    def _send(self, body: dict, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def slow_server(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowList)
    server.daemon_threads = True
    server.delay_s, server.stall_at, server.released = 0.0, PAGES, threading.Event()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "u", "user": {}}], "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    cluster = KubeCluster(kubeconfig=str(kubeconfig))
    yield server, cluster
    server.released.set()
    cluster.close()
    server.shutdown()
    server.server_close()


def test_a_list_longer_than_the_stall_limit_is_waited_for_while_its_pages_come(slow_server):
    server, cluster = slow_server
    # 4 s in all, twice the 2 s limit; each page 0.8 s after the last, well within it (a 2-core CI running
    # the whole suite delays the informer's thread, and a 0.4 s margin was once not enough)
    server.delay_s = 0.8
    watch = Informer(cluster.client, kind_of("ResourceSlice"))
    started = time.monotonic()
    try:
        watch.start(stall_s=2.0)
        assert time.monotonic() - started > 3.0
        assert len(watch.items()) == PAGES * 500
    finally:
        watch.stop()


def test_a_list_whose_pages_stop_fails_with_its_progress(slow_server):
    server, cluster = slow_server
    server.stall_at = 2
    watch = Informer(cluster.client, kind_of("ResourceSlice"))
    started = time.monotonic()
    try:
        with pytest.raises(ClusterError) as caught:
            watch.start(stall_s=1.0)
        assert time.monotonic() - started < 5
        assert "listing resourceslices stalled: no page for 1 s (1,000 objects listed so far)" in str(caught.value)
        assert "/readyz" in caught.value.hint
        assert not watch.synced.is_set()
    finally:
        server.released.set()
        watch.stop()
