"""Where each workload kind keeps its pod templates: Kubernetes' own kinds and the common ML custom resources.

A path is a tuple of keys; ``*`` stands for every entry of a map (a PyTorchJob's replica types) or of a list
(a JobSet's replicated jobs). The custom kinds' paths are those of their projects' CRDs (Kubeflow Training
Operator and MPI Operator, JobSet, LeaderWorkerSet, KubeRay).

>>> [(dotted(p.path), p.label) for p in pod_specs({"kind": "PyTorchJob", "apiVersion": "kubeflow.org/v1", "spec":
...     {"pytorchReplicaSpecs": {"Master": {"template": {"spec": {}}}}}})]
[('spec.pytorchReplicaSpecs.Master.template.spec', 'Master')]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

ANY = "*"
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class PodTemplate:
    """Where a kind keeps one of its pod specs, and what to call the pods made from it."""

    label: str  # "" for a kind's only pod template; "{}" is filled with the name of the entry ``*`` stands for
    path: tuple[str, ...]


@dataclass(frozen=True)
class FoundPod:
    """One pod spec of a document: where it is, what its pods are called, and the spec itself."""

    path: Path
    label: str
    spec: Mapping


@dataclass(frozen=True)
class WorkloadKind:
    """A kind that runs pods: where its pod specs are, and for a custom resource, who installs it."""

    kind: str
    pods: tuple[PodTemplate, ...]
    group: str | None = None  # the API group of a custom resource; None: a kind of Kubernetes itself
    installed_by: str = ""  # the project whose CRD a cluster must have installed

    @property
    def custom(self) -> bool:
        """Whether the kind is a custom resource (not served by Kubernetes itself)."""
        return self.group is not None


def _one(*path: str) -> tuple[PodTemplate, ...]:
    return (PodTemplate("", path),)


_TEMPLATE = ("template", "spec")
_RAY_CLUSTER = (PodTemplate("head", ("headGroupSpec", *_TEMPLATE)), PodTemplate("{}", ("workerGroupSpecs", ANY, *_TEMPLATE)))
_KUBEFLOW = "the Kubeflow Training Operator"
_KINDS = (
    WorkloadKind("Pod", _one("spec")),
    *(WorkloadKind(k, _one("spec", *_TEMPLATE)) for k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job")),
    WorkloadKind("CronJob", _one("spec", "jobTemplate", "spec", *_TEMPLATE)),
    WorkloadKind("PyTorchJob", (PodTemplate("{}", ("spec", "pytorchReplicaSpecs", ANY, *_TEMPLATE)),), "kubeflow.org",
                 _KUBEFLOW),
    WorkloadKind("TFJob", (PodTemplate("{}", ("spec", "tfReplicaSpecs", ANY, *_TEMPLATE)),), "kubeflow.org", _KUBEFLOW),
    WorkloadKind("MPIJob", (PodTemplate("{}", ("spec", "mpiReplicaSpecs", ANY, *_TEMPLATE)),), "kubeflow.org",
                 "the Kubeflow MPI Operator"),
    WorkloadKind("JobSet", (PodTemplate("{}", ("spec", "replicatedJobs", ANY, "template", "spec", *_TEMPLATE)),),
                 "jobset.x-k8s.io", "JobSet"),
    WorkloadKind("LeaderWorkerSet", (PodTemplate("leader", ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec")),
                                     PodTemplate("worker", ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"))),
                 "leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    WorkloadKind("RayCluster", tuple(PodTemplate(t.label, ("spec", *t.path)) for t in _RAY_CLUSTER), "ray.io", "KubeRay"),
    WorkloadKind("RayJob", (*(PodTemplate(t.label, ("spec", "rayClusterSpec", *t.path)) for t in _RAY_CLUSTER),
                            PodTemplate("submitter", ("spec", "submitterPodTemplate", "spec"))), "ray.io", "KubeRay"),
)
BUILT_IN = {k.kind: k for k in _KINDS if not k.custom}
CUSTOM = {k.kind: k for k in _KINDS if k.custom}


def workload_kind(doc: Mapping[str, Any]) -> WorkloadKind | None:
    """The WorkloadKind of ``doc``: a built-in kind by its kind, a custom one by kind and API group."""
    kind = doc.get("kind")
    if kind in BUILT_IN:
        return BUILT_IN[kind]
    known = CUSTOM.get(kind)  # type: ignore[arg-type]
    group = str(doc.get("apiVersion") or "").rpartition("/")[0]
    return known if known is not None and group == known.group else None


def _entry_name(item: Any, index: int) -> str:
    name = item.get("name") or item.get("groupName") if isinstance(item, Mapping) else None
    return str(name or index)


def _walk(node: Any, pattern: tuple[str, ...], at: Path, name: str) -> Iterator[tuple[Path, str, Mapping]]:
    if not pattern:
        if isinstance(node, Mapping):
            yield at, name, node
        return
    key, rest = pattern[0], pattern[1:]
    if key == ANY and isinstance(node, Mapping):
        for entry, child in node.items():
            yield from _walk(child, rest, (*at, str(entry)), str(entry))
    elif key == ANY and isinstance(node, list):
        for index, child in enumerate(node):
            yield from _walk(child, rest, (*at, index), _entry_name(child, index))
    elif isinstance(node, Mapping) and key in node:
        yield from _walk(node[key], rest, (*at, key), name)


def pod_specs(doc: Mapping[str, Any]) -> list[FoundPod]:
    """Every pod spec in ``doc`` (a Deployment's one, a PyTorchJob's per replica type); none for other kinds."""
    known = workload_kind(doc)
    if known is None:
        return []
    return [FoundPod(path, template.label.format(name), spec) for template in known.pods
            for path, name, spec in _walk(doc, template.path, (), "")]


def dotted(path: Path) -> str:
    """``spec.replicatedJobs[0].template.spec`` for a path."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out
