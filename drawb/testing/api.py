"""A small JSON client for the Kubernetes API, for tests and the fake driver.

Objects are plain dicts as the server sends them (orjson), never the client's generated models.
The connection settings (server, certificates, token) come from the official client's
``ApiClient``; requests go through its urllib3 pool.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlencode

import orjson
import urllib3
from kubernetes import client, config

# kind -> (API path prefix, plural, namespaced) for the kinds drawb's tests handle.
KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Node": ("/api/v1", "nodes", False),
    "Pod": ("/api/v1", "pods", True),
    "Event": ("/api/v1", "events", True),
    "ServiceAccount": ("/api/v1", "serviceaccounts", True),
    "ConfigMap": ("/api/v1", "configmaps", True),
    "Lease": ("/apis/coordination.k8s.io/v1", "leases", True),
    "DeviceClass": ("/apis/resource.k8s.io/v1", "deviceclasses", False),
    "ResourceSlice": ("/apis/resource.k8s.io/v1", "resourceslices", False),
    "ResourceClaim": ("/apis/resource.k8s.io/v1", "resourceclaims", True),
    "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1", "resourceclaimtemplates", True),
    "Logs": ("/apis/kwok.x-k8s.io/v1alpha1", "logs", True),
}


class ApiError(Exception):
    """The API server answered with an error status; carries its status and message."""

    def __init__(self, status: int, reason: str, message: str, method: str, path: str):
        super().__init__(f"{method} {path}: {status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


def path_for(kind: str, name: str = "", namespace: str = "") -> str:
    """The REST path of a kind (collection when ``name`` is empty), optionally in a namespace."""
    prefix, plural, namespaced = KINDS[kind]
    path = f"{prefix}/namespaces/{namespace}/{plural}" if namespaced and namespace else f"{prefix}/{plural}"
    return f"{path}/{name}" if name else path


def path_of(obj: dict) -> str:
    """The REST path of an object, from its kind, name and namespace."""
    meta = obj["metadata"]
    return path_for(obj["kind"], meta.get("name", ""), meta.get("namespace", ""))


class Api:
    """JSON requests against one API server."""

    def __init__(self, api_client: client.ApiClient):
        self.api_client = api_client
        self.host = api_client.configuration.host.rstrip("/")
        self._pool = api_client.rest_client.pool_manager

    @classmethod
    def from_kubeconfig(cls, path: str) -> Api:
        """An Api for the current context of a kubeconfig file."""
        return cls(config.new_client_from_config(config_file=str(path)))

    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        token = self.api_client.configuration.api_key.get("authorization")
        if token:
            headers["Authorization"] = token
        if content_type:
            headers["Content-Type"] = content_type
        return headers

    def _open(self, method: str, path: str, query: dict | None, body, content_type, timeout):
        url = self.host + path + ("?" + urlencode(query) if query else "")
        data = orjson.dumps(body) if body is not None else None
        resp = self._pool.request(
            method, url, body=data, headers=self._headers(content_type if data else None),
            timeout=timeout, preload_content=False,
        )
        if resp.status >= 400:
            raw = resp.read()
            resp.release_conn()
            try:
                message = orjson.loads(raw).get("message", raw.decode())
            except orjson.JSONDecodeError:
                message = raw.decode(errors="replace")
            raise ApiError(resp.status, resp.reason or "", message, method, path)
        return resp

    def request(self, method: str, path: str, body=None, query: dict | None = None,
                content_type: str = "application/json", timeout: float = 30) -> dict:
        """One request; the decoded JSON answer (``{}`` when empty)."""
        resp = self._open(method, path, query, body, content_type, timeout)
        raw = resp.read()
        resp.release_conn()
        return orjson.loads(raw) if raw else {}

    def text(self, path: str, query: dict | None = None, timeout: float = 30) -> str:
        """A GET whose answer is text (pod logs, /readyz)."""
        resp = self._open("GET", path, query, None, None, timeout)
        raw = resp.read()
        resp.release_conn()
        return raw.decode()

    def get(self, path: str, **query) -> dict:
        """GET an object or a list."""
        return self.request("GET", path, query=query or None)

    def get_or_none(self, path: str) -> dict | None:
        """GET an object, or None when it does not exist."""
        try:
            return self.get(path)
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def create(self, obj: dict, **query) -> dict:
        """POST an object to its collection."""
        meta = obj["metadata"]
        return self.request("POST", path_for(obj["kind"], namespace=meta.get("namespace", "")), obj, query or None)

    def apply(self, obj: dict, field_manager: str, subresource: str = "") -> dict:
        """Server-side apply of a whole object (force, so re-applying after a restart wins)."""
        path = path_of(obj) + (f"/{subresource}" if subresource else "")
        query = {"fieldManager": field_manager, "force": "true"}
        return self.request("PATCH", path, obj, query, content_type="application/apply-patch+yaml")

    def delete(self, path: str, missing_ok: bool = True, **query) -> dict | None:
        """DELETE an object (or a collection with ``labelSelector``)."""
        try:
            return self.request("DELETE", path, query=query or None)
        except ApiError as err:
            if missing_ok and err.status == 404:
                return None
            raise

    def watch(self, path: str, resource_version: str, timeout_seconds: int = 60) -> Iterator[dict]:
        """Watch events (``{"type", "object"}``) of a collection from a resourceVersion.

        Ends when the server closes the watch; raises ApiError(410) when the version is too old.
        """
        query = {
            "watch": "true",
            "resourceVersion": resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(timeout_seconds),
        }
        resp = self._open("GET", path, query, None, None, timeout=urllib3.Timeout(connect=10, read=timeout_seconds + 10))
        buffer = b""
        try:
            for chunk in resp.stream(65536):
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    event = orjson.loads(line)
                    if event["type"] == "ERROR":
                        status = event["object"]
                        raise ApiError(status.get("code", 500), status.get("reason", ""),
                                       status.get("message", ""), "WATCH", path)
                    yield event
        finally:
            resp.release_conn()
