"""The checks the simulated API server makes before it stores an object.

The API server's rules (``drawb.apirules``), as ``validate`` reads them: the ``resource.k8s.io`` versions
the cluster's version serves, the strict OpenAPI schema of the document's group version, then the
validation rules (selectors that compile, request names, the v1 limits such as 128 devices per slice, ...),
run on the object as the server validates it, after the fields of disabled gates are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from drawb.api.names import invalid
from drawb.apirules import label, name_refusals, rule_refusals, schema_refusals, unserved
from drawb.cluster.protocol import ClusterError, kind_of

def _resource(kind_name: str) -> str:
    kind = kind_of(kind_name)
    group = kind.api_version.rpartition("/")[0]
    return f"{kind.kind}.{group}" if group else kind.kind


def _invalid(obj: dict, details: list[str]) -> ClusterError:
    name = obj["metadata"]["name"]
    return ClusterError(f'{_resource(obj["kind"])} "{name}" is invalid: {"; ".join(details)}', status=422,
                        reason="Invalid")


def check_name(obj: dict) -> None:
    """Raise ClusterError, worded like the API server, if ``obj`` has no valid name."""
    issues = name_refusals(obj)
    if not issues:
        return
    name = obj["metadata"].get("name") if isinstance(obj.get("metadata"), dict) else None
    if not name:
        raise ClusterError(f"{kind_of(obj.get('kind', '')).kind} without metadata.name: every object needs a name",
                           status=422, reason="Invalid")
    raise _invalid(obj, [invalid(i.path, name, i.message) for i in issues])


def check_schema(obj: dict, kubernetes_version: str, enabled: Collection[str] = ()) -> None:
    """Refuse a group version the server does not serve (404, as the real one: it has no such resource; of
    the alpha and beta ones it serves those ``enabled``), a field the schema of that group version lacks, or
    a value of the wrong type."""
    if not obj.get("apiVersion"):  # the real server cannot decode it
        raise ClusterError(f"invalid object type: {obj.get('kind')} has no apiVersion", status=400, reason="BadRequest")
    refused = unserved(obj, label(obj), kubernetes_version, enabled=enabled)
    if refused is not None:
        raise ClusterError(f"the server could not find the requested resource: {refused.message}", status=404,
                           reason="NotFound")
    issues = schema_refusals(obj, kubernetes_version)
    if issues:
        raise _invalid(obj, [f"{i.path}: {i.message}" if i.path else i.message for i in issues])


def check_rules(obj: dict, kubernetes_version: str, namespace_labels: Callable[[str], dict | None]) -> None:
    """Refuse what the API server's validation refuses (run on the object after gated fields are dropped)."""
    issues = rule_refusals(obj, kubernetes_version, namespace_labels)
    if issues:
        raise _invalid(obj, [f"{i.path}: {i.message}" for i in issues])
