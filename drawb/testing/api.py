"""The test client: drawb's REST layer (drawb.cluster.kube.rest) with the extras tests and the fake driver need.

The extras are the kinds only tests touch (service accounts, leases, kwok's Logs), paths by kind
name, POST, plain server-side apply without drawb's label (the fake driver publishes as a driver
would), text answers (/metrics, /readyz, logs) and a raw watch. Errors are ClusterError, with the
server's status.
"""

from __future__ import annotations

from collections.abc import Iterator

from kubernetes import client, config

from drawb.cluster.kube.rest import open_watch, request, watch_events
from drawb.cluster.protocol import KINDS, ClusterError, Kind

ApiError = ClusterError  # what the test client raises: the REST layer's error, with the server's status and message

# The namespaced kinds only tests touch, as (kind, apiVersion, plural), beside the protocol's.
_TEST_ONLY = (
    ("ServiceAccount", "v1", "serviceaccounts"),
    ("ConfigMap", "v1", "configmaps"),
    ("Lease", "coordination.k8s.io/v1", "leases"),
    ("Logs", "kwok.x-k8s.io/v1alpha1", "logs"),
)
TEST_KINDS: dict[str, Kind] = {**KINDS, **{k: Kind(k, v, plural, True) for k, v, plural in _TEST_ONLY}}


def path_for(kind: str, name: str = "", namespace: str = "") -> str:
    """The REST path of a kind (collection when ``name`` is empty), optionally in a namespace."""
    return TEST_KINDS[kind].path(namespace or None, name or None)


def path_of(obj: dict) -> str:
    """The REST path of an object, from its kind, name and namespace."""
    meta = obj["metadata"]
    return path_for(obj["kind"], meta.get("name", ""), meta.get("namespace", ""))


class Api:
    """JSON requests against one API server."""

    def __init__(self, api_client: client.ApiClient):
        self.api_client = api_client
        self.host = api_client.configuration.host.rstrip("/")

    @classmethod
    def from_kubeconfig(cls, path: str) -> Api:
        """An Api for the current context of a kubeconfig file."""
        return cls(config.new_client_from_config(config_file=str(path)))

    def request(self, method: str, path: str, body=None, query: dict | None = None,
                content_type: str = "application/json", timeout: float = 30) -> dict:
        """One request; the decoded JSON answer (``{}`` when empty)."""
        answer = request(self.api_client, method, path, query=query, body=body, content_type=content_type,
                         timeout=timeout)
        return answer if answer is not None else {}

    def text(self, path: str, query: dict | None = None, timeout: float = 30) -> str:
        """A GET whose answer is text (pod logs, /readyz)."""
        raw = request(self.api_client, "GET", path, query=query, timeout=timeout, stream=True)
        try:
            return raw.data.decode()
        finally:
            raw.release_conn()

    def get(self, path: str, **query) -> dict:
        """GET an object or a list."""
        return self.request("GET", path, query=query or None)

    def get_or_none(self, path: str) -> dict | None:
        """GET an object, or None when it does not exist."""
        try:
            return self.get(path)
        except ClusterError as err:
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
        except ClusterError as err:
            if missing_ok and err.status == 404:
                return None
            raise

    def watch(self, kind: str, resource_version: str, timeout_seconds: int = 60, namespace: str = "") -> Iterator[dict]:
        """Watch events (``{"type", "object"}``) of a kind from a resourceVersion.

        Ends when the server closes the watch; raises ClusterError (status 410) when the version is too old.
        """
        response = open_watch(self.api_client, TEST_KINDS[kind], resource_version, timeout_seconds, namespace or None)
        yield from watch_events(response)
