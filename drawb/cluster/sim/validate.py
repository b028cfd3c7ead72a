"""The checks the simulated API server makes before it stores an object."""

from __future__ import annotations

from drawb.api.names import invalid, is_dns1123_label, is_dns1123_subdomain
from drawb.cluster.protocol import ClusterError, kind_of

_LABEL_NAMED = {"Namespace"}


def check_object(obj: dict) -> None:
    """Raise ClusterError, worded like the API server, if ``obj`` would be rejected."""
    kind = kind_of(obj.get("kind", ""))
    name = (obj.get("metadata") or {}).get("name") or ""
    if not name:
        raise ClusterError(f"{kind.kind} without metadata.name: every object needs a name", status=422,
                           reason="Invalid")
    problems = (is_dns1123_label if kind.kind in _LABEL_NAMED else is_dns1123_subdomain)(name)
    if problems:
        group = kind.api_version.rpartition("/")[0]
        resource = f"{kind.kind}.{group}" if group else kind.kind
        details = "; ".join(invalid("metadata.name", name, p) for p in problems)
        raise ClusterError(f'{resource} "{name}" is invalid: {details}', status=422, reason="Invalid")
