"""A loopback TCP proxy that a test can cut: drawb talks to the API server through it, and the test
drops every open connection (as a broken network would) or refuses new ones for a while.
"""

from __future__ import annotations

import socket
import struct
import threading
import time


class TcpProxy:
    """Forwards ``127.0.0.1:<port>`` to ``upstream``; ``cut()`` drops every open connection."""

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.accepted: list[float] = []  # monotonic time of every connection attempt
        self._refusing = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._spawn(self._accept_loop, "drawb-proxy-accept")

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``."""
        return f"127.0.0.1:{self.port}"

    def cut(self) -> int:
        """Drop every open connection (both sides see a reset); the number dropped."""
        with self._lock:
            victims, self._open = list(self._open), set()
        for sock in victims:
            _close(sock, reset=True)
        return len(victims) // 2

    def refuse(self, refusing: bool = True) -> None:
        """While ``refusing``, close every new connection at once (a server that is down)."""
        if refusing:
            self._refusing.set()
        else:
            self._refusing.clear()

    def close(self) -> None:
        """Stop listening, drop everything and join the proxy's threads."""
        self._closed.set()
        _close(self._listener)
        self.cut()
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target, name: str, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            if self._refusing.is_set():
                _close(client, reset=True)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _close(client, reset=True)
                continue
            server.settimeout(None)
            with self._lock:
                self._open.update((client, server))
            self._spawn(self._pump, "drawb-proxy-pump", client, server)
            self._spawn(self._pump, "drawb-proxy-pump", server, client)

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        with self._lock:
            self._open.difference_update((source, sink))
        _close(source)
        _close(sink)


def _close(sock: socket.socket, reset: bool = False) -> None:
    """Close ``sock``, waking a thread blocked reading it; with ``reset`` the peer gets an RST, not a FIN."""
    try:
        if reset:  # SO_LINGER on with 0 s: close() sends RST, as a dropped connection would
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RD if reset else socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
