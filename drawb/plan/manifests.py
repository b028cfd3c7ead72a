"""Manifests a user hands to ``preview`` or ``capacity`` (``-f FILE``, a rendered template): the
Kubernetes objects in them and which one is the workload."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from drawb.plan.errors import NotAManifest
from drawb.plan.workload import SHORT

WORKLOAD_KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate")


HINT = "give a YAML file with a Pod, a ResourceClaim or a ResourceClaimTemplate (apiVersion, kind, metadata.name)"


def parse_manifests(text: str, source: str) -> list[dict]:
    """The Kubernetes objects of a YAML (or JSON) text; NotAManifest when there is none."""
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise NotAManifest(f"{source} is not YAML{where}: {getattr(exc, 'problem', None) or exc}", hint=HINT) from None
    objects = []
    for document in documents:
        items = document.get("items") if isinstance(document, dict) and document.get("kind", "").endswith("List") else [document]
        for obj in items or []:
            if not (isinstance(obj, dict) and obj.get("kind") and obj.get("apiVersion")
                    and isinstance(obj.get("metadata"), dict) and obj["metadata"].get("name")):
                raise NotAManifest(f"{source}: document {len(objects) + 1} is not a Kubernetes object "
                                   "(it needs apiVersion, kind and metadata.name)", hint=HINT)
            objects.append(obj)
    if not any(o["kind"] in WORKLOAD_KINDS for o in objects):
        kinds = ", ".join(sorted({o["kind"] for o in objects})) or "nothing"
        raise NotAManifest(f"{source} holds no Pod, ResourceClaim or ResourceClaimTemplate (found: {kinds})", hint=HINT)
    return objects


def default_target(objects: Sequence[dict], source: str) -> tuple[str, str]:
    """(kind, name) of the workload in the objects: the pod, else the claim, else the template."""
    for kind in WORKLOAD_KINDS:
        found = [o["metadata"]["name"] for o in objects if o.get("kind") == kind]
        if len(found) == 1:
            return kind, found[0]
        if len(found) > 1:
            raise NotAManifest(f"{source} holds {len(found)} {kind}s ({', '.join(found)}): say which one",
                               hint=f"name it, e.g. {SHORT[kind]}/{found[0]}")
    raise NotAManifest(f"{source} holds no Pod, ResourceClaim or ResourceClaimTemplate", hint=HINT)
