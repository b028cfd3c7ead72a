"""A remedy applied to the objects it names: the edited claim, or the claims to free (pure; no I/O).

A claim's spec cannot change once created, so an edit is a new claim body with the same name, to be
created after the old one is deleted."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from drawb.explain.result import Remedy

EDITS = ("drop-selectors", "lower-count", "tolerate", "drop-constraints")


def edited_claim(claim: Mapping[str, Any], remedy: Remedy) -> dict:
    """A new body of ``claim`` with ``remedy`` (one of ``EDITS``) applied; status and server fields dropped."""
    if remedy.kind not in EDITS:
        raise ValueError(f"remedy {remedy.kind!r} does not edit a claim")
    body = copy.deepcopy({k: v for k, v in claim.items() if k != "status"})
    meta = body.get("metadata") or {}
    body["metadata"] = {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}
    devices = body["spec"]["devices"]
    if remedy.kind == "drop-constraints":
        devices.pop("constraints", None)
        return body
    for request in devices.get("requests") or []:
        if remedy.request and request.get("name") != remedy.request:
            continue
        for target in [request["exactly"]] if request.get("exactly") is not None else request.get("firstAvailable") or []:
            if remedy.kind == "drop-selectors":
                target.pop("selectors", None)
            elif remedy.kind == "lower-count" and remedy.count is not None:
                target["count"] = min(int(target.get("count", 1)), remedy.count)
            elif remedy.kind == "tolerate":
                known = target.setdefault("tolerations", [])
                known += [t for t in remedy.tolerations if t not in known]
    return body
