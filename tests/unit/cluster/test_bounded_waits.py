"""Bounded waits: a server that accepts and never answers fails a command within 15 s, with a named error.

The servers are real sockets on 127.0.0.1: one accepts TCP connections and never sends a byte (a TLS
handshake never completes), one completes TLS, reads the request and never answers. The command line
runs as a real process.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.rest import Timeouts
from drawb.cluster.protocol import NotConnected
from drawb.commands.registry import run_line
from drawb.errors import UsageError
from drawb.session import Session

DRAWB = Path(sys.executable).with_name("drawb")
LIMIT_S = 15


class SilentServer:
    """Accepts every connection and keeps it open without answering (after the TLS handshake when ``tls``)."""

    def __init__(self, tls: ssl.SSLContext | None = None):
        self.tls = tls
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:  # closed
                return
            if self.tls is not None:
                try:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                    conn.recv(65536)  # the request, which is never answered
                except (OSError, ssl.SSLError):
                    pass
            self.accepted.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def tcp_silent():
    server = SilentServer()
    yield server
    server.close()


@pytest.fixture
def tls_silent(certificate):
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*map(str, certificate))
    server = SilentServer(tls=context)
    yield server
    server.close()


def kubeconfig(tmp_path: Path, port: int, ca: Path) -> Path:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "silent",
              "clusters": [{"name": "silent", "cluster": {"server": f"https://127.0.0.1:{port}",
                                                          "certificate-authority": str(ca)}}],
              "users": [{"name": "u", "user": {}}],
              "contexts": [{"name": "silent", "context": {"cluster": "silent", "user": "u"}}]}
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    return path


def drawb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DRAWB), *args], capture_output=True, text=True, timeout=120)


def fails_named_within(session: Session, limit_s: float) -> NotConnected:
    """Run ``devices`` in ``session``; the NotConnected it fails with, within ``limit_s`` seconds."""
    started = time.monotonic()
    with pytest.raises(NotConnected) as caught:
        run_line(session, "devices")
    took = time.monotonic() - started
    assert took < limit_s, took
    return caught.value


@pytest.mark.parametrize("server", ["tcp_silent", "tls_silent"])
def test_a_server_that_accepts_and_never_answers_fails_within_15_s(tmp_path, server, certificate, request):
    silent = request.getfixturevalue(server)
    path = kubeconfig(tmp_path, silent.port, certificate[0])
    error = fails_named_within(Session(kubeconfig=str(path)), LIMIT_S)
    phase = "connect (TCP and TLS)" if server == "tcp_silent" else "read"
    assert str(error) == (f"cannot reach the API server at https://127.0.0.1:{silent.port}: no answer within the "
                          f"{phase} timeout of {5 if server == 'tcp_silent' else 10:g} s"), str(error)
    assert "--connect-timeout" in error.hint and "--read-timeout" in error.hint
    assert len(silent.accepted) == 1  # one attempt, no retry loop multiplying the wait

    out = drawb("--kubeconfig", str(path), "devices")  # the command line says the same, without a traceback
    assert out.returncode == 2 and out.stderr.startswith(f"ServerTimedOut: {error}\n"), out.stderr


def test_the_timeouts_are_the_users_to_set(tmp_path, tls_silent, tcp_silent, certificate):
    ca = certificate[0]
    fails_named_within(Session(kubeconfig=str(kubeconfig(tmp_path, tls_silent.port, ca)), read_timeout="1"), 4)
    fails_named_within(Session(kubeconfig=str(kubeconfig(tmp_path, tcp_silent.port, ca)), connect_timeout="1"), 4)
    with pytest.raises(NotConnected, match="read timeout of 1 s"):
        KubeCluster(kubeconfig=str(kubeconfig(tmp_path, tls_silent.port, ca)), timeouts=Timeouts(5, 1)).server_version()
    out = drawb("--read-timeout", "1", "--kubeconfig", str(kubeconfig(tmp_path, tls_silent.port, ca)), "devices")
    assert out.returncode == 2 and "no answer within the read timeout of 1 s" in out.stderr, out.stderr


def test_a_timeout_that_is_no_number_is_named():
    with pytest.raises(UsageError, match="read_timeout is 'soon'; it must be a number of seconds"):
        Session(read_timeout="soon").timeouts()
    assert Session(connect_timeout="0", read_timeout="2.5").timeouts() == Timeouts(None, 2.5)
    out = drawb("--connect-timeout", "-1", "--kubeconfig", "/nonexistent", "devices")
    assert out.returncode == 2 and out.stderr.startswith("UsageError: connect_timeout is '-1'")
