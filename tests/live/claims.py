"""The ResourceClaimTemplates live tests create: one request ``gpu`` of class gpu.nvidia.com."""

from __future__ import annotations


def claim_template(name: str, namespace: str | None = None, *, count: int | None = None,
                   selector: str | None = None) -> dict:
    """A ResourceClaimTemplate asking for one GPU, or for exactly ``count`` (``ExactCount``), of those
    ``selector`` (a CEL expression) accepts; in ``namespace`` if given."""
    exactly: dict = {"deviceClassName": "gpu.nvidia.com"}
    if count is not None:
        exactly.update(allocationMode="ExactCount", count=count)
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    meta = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": meta,
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}]}}}}
