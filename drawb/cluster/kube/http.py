"""Raw JSON requests through the official client's ApiClient (auth, TLS, proxies come from it)."""

from __future__ import annotations

from urllib.parse import urlencode

import orjson
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from drawb.cluster.protocol import ClusterError, NotConnected

DEFAULT_TIMEOUT = (5, 60)  # connect, read seconds


def request(
    client: ApiClient,
    method: str,
    path: str,
    *,
    query: dict | None = None,
    body: object = None,
    content_type: str = "application/json",
    timeout: object = DEFAULT_TIMEOUT,
    stream: bool = False,
):
    """Send one request; return the parsed JSON body (or the raw response when ``stream``)."""
    url_path = path + ("?" + urlencode({k: v for k, v in (query or {}).items() if v is not None}) if query else "")
    headers = {"Accept": "application/json", "Content-Type": content_type}
    data = orjson.dumps(body).decode() if body is not None and not isinstance(body, str) else body
    try:
        serialized = client.param_serialize(
            method, url_path, header_params=headers, body=None, auth_settings=["BearerToken"]
        )
        method_, url, header_params, _, post = serialized
        response = client.call_api(method_, url, header_params, data, post, _request_timeout=timeout)
    except ApiException as exc:
        raise _cluster_error(exc.status, exc.body, exc.reason) from None
    except Exception as exc:  # urllib3 connection errors and the like
        raise NotConnected(f"cannot reach the API server at {client.configuration.host}: {_short(exc)}") from None
    raw = response.response
    if not 200 <= response.status <= 299:
        raise _cluster_error(response.status, raw.data, raw.reason)
    if stream:
        return raw
    payload = raw.data
    return orjson.loads(payload) if payload else None


def _short(exc: Exception) -> str:
    text = str(exc)
    return text.split("Caused by")[-1].strip(" ()'\"") if "Caused by" in text else text


def _cluster_error(status: int | None, body: bytes | str | None, reason: str | None) -> ClusterError:
    message, why = reason or "error", reason
    try:
        payload = orjson.loads(body) if body else {}
        message = payload.get("message") or message
        why = payload.get("reason") or why
    except orjson.JSONDecodeError:
        pass
    return ClusterError(f"{message} (HTTP {status})", status=status, reason=why)
