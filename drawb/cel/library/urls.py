"""The Kubernetes URL library: url(), isURL and the URL getters."""

from __future__ import annotations

import urllib.parse
from typing import Any

from drawb.cel.decls import B, URL, S, T
from drawb.cel.library._registry import constant_cost, fn
from drawb.cel.ranges import STRING_TRAVERSAL
from drawb.cel.values import CelError


def _url_cost(c, overload, target, args):
    if len(args) != 1:
        return None
    size = c.size_of(args[0])
    return size.factor(STRING_TRAVERSAL), size


class _URL:
    cel_type_name = "kubernetes.URL"

    def __init__(self, parsed: urllib.parse.SplitResult) -> None:
        self.parsed = parsed


def _parse_url(s: str) -> _URL:
    parsed = urllib.parse.urlsplit(s)
    if not parsed.scheme and not s.startswith("/"):
        raise CelError(f"URL parse error during conversion from string: parse \"{s}\": invalid URI for request")
    return _URL(parsed)


@fn("url", ("string_to_url", [S], URL, False), cost=_url_cost)
def _url(s: Any) -> _URL:
    return _parse_url(s)


@fn("isURL", ("is_url_string", [S], B, False))
def is_url(s: Any) -> bool:
    try:
        _parse_url(s)
    except (CelError, ValueError):
        return False
    return True


@fn("getScheme", ("url_get_scheme", [URL], S, True), cost=constant_cost)
def _get_scheme(u: Any) -> str:
    return u.parsed.scheme


@fn("getHost", ("url_get_host", [URL], S, True), cost=constant_cost)
def _get_host(u: Any) -> str:
    return u.parsed.netloc.rpartition("@")[2]


@fn("getHostname", ("url_get_hostname", [URL], S, True), cost=constant_cost)
def _get_hostname(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        return host[1 : host.index("]")]
    return host.rsplit(":", 1)[0] if ":" in host else host


@fn("getPort", ("url_get_port", [URL], S, True), cost=constant_cost)
def _get_port(u: Any) -> str:
    host = _get_host(u)
    if host.startswith("["):
        rest = host[host.index("]") + 1 :]
        return rest[1:] if rest.startswith(":") else ""
    return host.rsplit(":", 1)[1] if ":" in host else ""


@fn("getEscapedPath", ("url_get_escaped_path", [URL], S, True), cost=constant_cost)
def _get_escaped_path(u: Any) -> str:
    return u.parsed.path


@fn("getQuery", ("url_get_query", [URL], T.Map(S, T.List(S)), True), cost=constant_cost)
def _get_query(u: Any) -> dict:
    return {k: v for k, v in urllib.parse.parse_qs(u.parsed.query, keep_blank_values=True).items()}
