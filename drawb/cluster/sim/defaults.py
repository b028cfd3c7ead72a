"""The defaults the API server fills into ResourceClaims and ResourceClaimTemplates it stores.

``resource.k8s.io/v1``: a request (``exactly``) or subrequest (``firstAvailable[]``) without
``allocationMode`` gets ``ExactCount``, an ExactCount one without ``count`` (or with 0) gets 1, and a device
toleration without ``operator`` gets ``Equal``. The claim the resourceclaim controller makes from
a template therefore carries them too, as on the local control plane.

A Pod is created ``Pending`` whatever status it was sent with, as kube-apiserver's pod strategy makes it (a
pod whose claims do not exist yet never reaches the scheduler, and stays so).
"""

from __future__ import annotations


def _default_request(request: dict) -> None:
    request.setdefault("allocationMode", "ExactCount")
    if request["allocationMode"] == "ExactCount" and not request.get("count"):
        request["count"] = 1  # count is omitempty in v1: 0 is no count, and gets the default too
    for toleration in request.get("tolerations") or ():
        toleration.setdefault("operator", "Equal")


def _default_claim_spec(spec: dict) -> None:
    for request in (spec.get("devices") or {}).get("requests") or ():
        if isinstance(request.get("exactly"), dict):
            _default_request(request["exactly"])
        for sub in request.get("firstAvailable") or ():
            _default_request(sub)


def apply_defaults(obj: dict) -> None:
    """Fill in the API server's defaults, in place."""
    if obj.get("kind") == "Pod":
        obj["status"] = {"phase": "Pending"}
    elif obj.get("kind") == "ResourceClaim":
        _default_claim_spec(obj.get("spec") or {})
    elif obj.get("kind") == "ResourceClaimTemplate":
        _default_claim_spec((obj.get("spec") or {}).get("spec") or {})
