"""How a connection's failure reads: an answer cut off partway (a server killed while it streams a watch)."""

from __future__ import annotations

import socket
import threading

import pytest
import urllib3

from drawb.cluster.kube.failures import failure_words


def test_an_answer_cut_off_in_the_middle_says_so():
    listener = socket.create_server(("127.0.0.1", 0))

    def answer_then_die() -> None:
        conn, _ = listener.accept()
        conn.recv(4096)
        conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nevent\n\r\n")
        conn.close()  # killed before the next chunk's length

    threading.Thread(target=answer_then_die, daemon=True).start()
    response = urllib3.PoolManager(retries=False).request(
        "GET", f"http://127.0.0.1:{listener.getsockname()[1]}/watch", preload_content=False)
    with pytest.raises(urllib3.exceptions.ProtocolError) as raised:
        list(response.stream(65536))
    listener.close()
    assert failure_words(raised.value) == "the connection closed in the middle of an answer"
