"""drawb's one REST layer over the official client's ApiClient (auth, TLS, proxies come from it).

Every request to a real API server goes through here: paths come from the protocol's ``Kind``,
lists are read page by page in one loop, and streamed answers (watch events, pod logs) are split
into lines in one place. Objects stay raw JSON dicts. Every failure becomes a named drawb error in
``failures`` (a client that carries ``kube_context``, the KubeContext it was made from, has an HTTP
401 name that context's user and how to refresh its credential).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import urlencode

import orjson
from kubernetes.client import ApiClient

from drawb.cluster.kube.failures import from_exception, from_status
from drawb.cluster.protocol import ClusterError, Kind

DEFAULT_CONNECT_S = 5.0
DEFAULT_READ_S = 10.0
PAGE_SIZE = 500


@dataclass(frozen=True)
class Timeouts:
    """How long drawb waits for the API server: to connect (TCP and TLS), and for each read of an answer
    (None: no limit). Requests are not retried, so a server that never answers fails within them."""

    connect_s: float | None = DEFAULT_CONNECT_S
    read_s: float | None = DEFAULT_READ_S

    def pair(self, read_s: float | None | bool = True) -> tuple[float | None, float | None]:
        """``(connect, read)`` as the client takes them, the read limit replaced by ``read_s`` when one is given."""
        return self.connect_s, (self.read_s if read_s is True else read_s)


def timeouts_of(client: ApiClient) -> Timeouts:
    """The client's Timeouts (``client.timeouts``, which KubeCluster sets), else the defaults."""
    return getattr(client, "timeouts", None) or Timeouts()


def request(
    client: ApiClient,
    method: str,
    path: str,
    *,
    query: dict | None = None,
    body: object = None,
    content_type: str = "application/json",
    timeout: tuple[float | None, float | None] | None = None,
    stream: bool = False,
):
    """Send one request; return the parsed JSON body (or the raw response when ``stream``).

    ``timeout``: ``(connect, read)`` seconds; by default the client's Timeouts."""
    query = {k: v for k, v in (query or {}).items() if v is not None}
    url_path = path + ("?" + urlencode(query) if query else "")
    headers = {"Accept": "application/json", "Content-Type": content_type}
    # The client serialises the body of every JSON content type itself (merge patches too); any other
    # content type (apply patches) is sent as text.
    json_body = "json" in content_type
    data = body if json_body or body is None or isinstance(body, str) else orjson.dumps(body).decode()
    timeout = timeout or timeouts_of(client).pair()
    try:
        serialized = client.param_serialize(
            method, url_path, header_params=headers, body=None, auth_settings=["BearerToken"]
        )
        method_, url, header_params, _, post = serialized
        response = client.call_api(method_, url, header_params, data, post, _request_timeout=timeout)
    except Exception as exc:  # the HTTP stack's, TLS's and the client's errors, and a credential refresh's
        raise from_exception(exc, client, timeout) from None
    raw = response.response
    if not 200 <= response.status <= 299:
        raise from_status(response.status, raw.data, raw.reason, client)
    if stream:
        return raw
    payload = raw.data
    return orjson.loads(payload) if payload else None


def list_objects(
    client: ApiClient, kind: Kind, namespace: str | None = None, on_page: Callable[[int], None] | None = None
) -> tuple[list[dict], str | None]:
    """Every object of ``kind`` (in ``namespace``, or everywhere), page by page, and the list's resourceVersion.

    List items lack ``apiVersion`` and ``kind``; they are filled in, so each item reads like a GET.
    ``on_page(objects so far)`` is called after each page (a long list's progress).
    """
    items: list[dict] = []
    token = None
    while True:
        page = request(client, "GET", kind.path(namespace), query={"limit": PAGE_SIZE, "continue": token})
        for item in page.get("items") or []:
            item.setdefault("apiVersion", kind.api_version)
            item.setdefault("kind", kind.kind)
            items.append(item)
        if on_page is not None:
            on_page(len(items))
        meta = page.get("metadata") or {}
        token = meta.get("continue")
        if not token:
            return items, meta.get("resourceVersion")


def open_watch(
    client: ApiClient, kind: Kind, resource_version: str | None, timeout_s: int, namespace: str | None = None
):
    """Start a watch of ``kind`` from ``resource_version`` (bookmarks on); the raw streaming response.

    The server ends the watch after ``timeout_s``; the client waits 30 s longer for each read before giving up.
    """
    query = {
        "watch": "true",
        "allowWatchBookmarks": "true",
        "resourceVersion": resource_version,
        "timeoutSeconds": timeout_s,
    }
    timeout = timeouts_of(client).pair(read_s=timeout_s + 30)
    return request(client, "GET", kind.path(namespace), query=query, stream=True, timeout=timeout)


def watch_events(response) -> Iterator[dict]:
    """The events (``{"type", "object"}``) of a watch response; an ERROR event raises ClusterError (410: expired)."""
    for line in stream_lines(response, chunk_size=65536):
        if not line.strip():
            continue
        event = orjson.loads(line)
        if event.get("type") == "ERROR":
            status = event.get("object") or {}
            raise ClusterError(status.get("message", "watch error"), status=status.get("code"), reason=status.get("reason"))
        yield event


def stream_lines(response, chunk_size: int = 4096) -> Iterator[bytes]:
    """The lines of a streamed response as they arrive (a last line without newline too); releases it at the end."""
    try:
        buffer = b""
        for chunk in response.stream(chunk_size, decode_content=False):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            yield from lines
        if buffer:
            yield buffer
    finally:
        response.release_conn()
