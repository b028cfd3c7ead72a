"""The manifests of the simulated-cluster differential (test_sim_differential_live.py): what a user would apply
first, in groups that each live in a namespace of their own.

* the seed's: every bundled template that makes pods, rendered with its defaults (the README journey's
  ``render single-gpu --apply`` and its siblings), and the default scenario's demo workloads as manifests
  (``drawb.cluster.sim.workloads`` without the status the scenario stores them with);
* the public corpus's workloads (tests/data/public-corpus): its Pods, ResourceClaims, ResourceClaimTemplates
  Deployments, Jobs and DeviceClasses, the legacy ``nvidia.com/gpu`` pods among them;
* generated workloads for the controllers: a Deployment of three replicas and a Job of two completions, one at
  a time, each with a claim template (the bundled templates with those values).

Each corpus file's documents move to a namespace of their own (``v1-gpu-test1`` for the namespace
``gpu-test1`` of the folder ``.../quickstart/v1``): the corpus reuses names
(``pod1`` in ``default`` in several files) and would otherwise collide. A folder whose files refer to each
other (the device-taint examples split a template and its pod over two files) shares one namespace. Nothing
else in a document is changed.
"""

from __future__ import annotations

import copy
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from drawb import versions
from drawb.cluster.sim.workloads import demo_workloads
from drawb.render import list_templates, render
from tests.contract.public_corpus import Document, load_documents

WORKLOAD_KINDS = ("Pod", "ResourceClaim", "ResourceClaimTemplate", "Deployment", "Job")
GENERATED = {"deployment": {"replicas": 3}, "job": {"completions": 2, "parallelism": 1}}


@dataclass
class Group:
    """Documents that live in one namespace of the differential, and where they come from."""

    namespace: str
    source: str
    objects: list[dict] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # the namespace's own labels

    def namespace_object(self) -> dict:
        meta: dict = {"name": self.namespace}
        if self.labels:
            meta["labels"] = dict(self.labels)
        return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def _slug(text: str, size: int) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:size].strip("-")


def seed(kubernetes_version: str) -> list[Group]:
    """The bundled templates that make pods, rendered with their defaults, and the demo workloads."""
    groups = []
    for info in list_templates():
        namespace = f"seed-{info.name}"
        rendered = render(info.name, {}, namespace=namespace, kubernetes_version=kubernetes_version)
        labels = {"resource.kubernetes.io/admin-access": "true"} if info.name == "admin-access" else {}
        groups.append(Group(namespace, f"template {info.name}", copy.deepcopy(rendered.documents), labels))
    demo = Group("seed-demo", "the default scenario's demo workloads")
    for obj in demo_workloads():
        if obj["kind"] == "Namespace":
            continue
        obj = copy.deepcopy(obj)
        obj.pop("status", None)
        obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k in ("name", "annotations")}
        obj["metadata"]["namespace"] = demo.namespace
        obj.get("spec", {}).pop("nodeName", None)
        if obj["kind"] == "ResourceClaim" and obj["metadata"].get("annotations"):
            continue  # made from the template by the resourceclaim controller, for the pod
        demo.objects.append(obj)
    return [*groups, demo]


def _namespace_names(keys: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """A namespace name per (corpus path, namespace the documents name): the path's last part and the namespace
    (``v1-gpu-test1``), with the path's first part before them where that alone is not unique."""
    def short(where: str, namespace: str, top: bool) -> str:
        parts = PurePosixPath(where.removesuffix(".yaml")).parts
        words = [parts[0]] * top + [parts[-1]] + [namespace] * (namespace != parts[-1])
        return _slug("-".join(words), 63)
    first = {key: short(*key, top=False) for key in keys}
    taken = [name for name in first.values()]
    return {key: name if taken.count(name) == 1 else short(*key, top=True) for key, name in first.items()}


def _served(doc: Document, rules: versions.Rules) -> bool:
    group, _, version = (doc.body.get("apiVersion") or "").rpartition("/")
    return group != "resource.k8s.io" or version in rules.served


def corpus(kubernetes_version: str) -> list[Group]:
    """The corpus's workloads served at ``kubernetes_version``, a namespace per folder (per file where names in a
    folder collide)."""
    rules = versions.rules(kubernetes_version)
    docs = [d for d in load_documents()
            if d.body.get("kind") in (*WORKLOAD_KINDS, "DeviceClass") and _served(d, rules)]
    classes = [d.body for d in docs if d.body["kind"] == "DeviceClass"]
    workloads = [d for d in docs if d.body["kind"] != "DeviceClass"]
    by_folder: dict[tuple[str, str], list[Document]] = defaultdict(list)
    for doc in workloads:
        by_folder[(str(PurePosixPath(doc.file).parent), doc.namespace or "default")].append(doc)
    keyed: dict[tuple[str, str], list[Document]] = {}
    for (folder, namespace), members in by_folder.items():
        names = [(d.body["kind"], d.body["metadata"]["name"]) for d in members]
        if len(set(names)) == len(names):
            keyed[(folder, namespace)] = members
        else:
            for doc in members:
                keyed.setdefault((doc.file, namespace), []).append(doc)
    groups = []
    names = _namespace_names(sorted(keyed))
    for (where, namespace), members in sorted(keyed.items()):
        group = Group(names[(where, namespace)], f"{where} (namespace {namespace})")
        for doc in members:
            body = copy.deepcopy(doc.body)
            body.setdefault("apiVersion", "v1")
            body["metadata"]["namespace"] = group.namespace
            group.objects.append(body)
        groups.append(group)
    names = [g.namespace for g in groups]
    assert len(set(names)) == len(names), f"two corpus groups share a namespace: {names}"
    if classes:
        groups.insert(0, Group("", "the corpus's DeviceClasses", copy.deepcopy(classes)))
    return groups


def generated(kubernetes_version: str) -> list[Group]:
    """A Deployment of three replicas and a Job of two completions (one pod at a time), each with its template."""
    return [Group(f"generated-{name}", f"template {name} with {values}",
                  copy.deepcopy(render(name, values, namespace=f"generated-{name}",
                                       kubernetes_version=kubernetes_version).documents))
            for name, values in GENERATED.items()]
