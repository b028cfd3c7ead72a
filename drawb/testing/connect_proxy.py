"""A loopback HTTP proxy that answers ``CONNECT host:port`` (the proxies a kubeconfig's ``proxy-url`` names):
it opens the tunnel, records which address each client asked for, and relays bytes both ways."""

from __future__ import annotations

import socket
import threading


class ConnectProxy:
    """An HTTP CONNECT proxy on ``127.0.0.1:<port>``; ``targets`` lists every ``host:port`` asked for."""

    def __init__(self):
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.targets: list[str] = []
        threading.Thread(target=self._accept_loop, name="drawb-connect-proxy", daemon=True).start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, as a kubeconfig's proxy-url."""
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop listening (open tunnels end when either side closes)."""
        self._listener.close()

    def _accept_loop(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    def _tunnel(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        self.targets.append(target)
        host, _, port = target.rpartition(":")
        try:
            server = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
        except OSError:
            client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            client.close()
            return
        server.settimeout(None)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        threading.Thread(target=_pump, args=(server, client), daemon=True).start()
        _pump(client, server)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    for sock in (source, sink):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
