"""``migrate``: move workloads off ``nvidia.com/gpu`` and ``nvidia.com/mig-*`` extended resources.

For each workload (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, and the ML
custom resources of ``drawb.api.workloads``: PyTorchJob, TFJob, MPIJob, JobSet, LeaderWorkerSet, RayCluster,
RayJob) that asks for them, drawb writes the claims road (a ResourceClaimTemplate per claim and the workload with
``resourceClaims`` and container ``claims`` in place of the limits, every other line as it was)
and checks the extended-resource road (DRAExtendedResource and a DeviceClass with the matching
``extendedResourceName``), each against the cluster: gate, classes, and whether the devices are
free now. Nothing is applied here.

>>> result = migrate(read_paths(["deploy.yaml"]), cluster)      # doctest: +SKIP
>>> print(result.diff())                                          # doctest: +SKIP
"""

from __future__ import annotations

from drawb.cluster.protocol import Cluster
from drawb.migrate.legacy import pod_spec
from drawb.migrate.errors import InvalidLegacyRequest, ManifestNotFound, ManifestNotYaml, UnknownWorkloadKind
from drawb.migrate.report import FileResult, Migration
from drawb.migrate.rewrite import Document, migrate_document, parse_documents
from drawb.migrate.roads import assess, read_facts
from drawb.migrate.sources import Source, read_cluster, read_paths

__all__ = ["InvalidLegacyRequest", "ManifestNotFound", "ManifestNotYaml", "Migration", "Source",
           "UnknownWorkloadKind", "migrate", "read_cluster", "read_paths", "rewrite_sources"]


def rewrite_sources(sources: list[Source]) -> list[FileResult]:
    """Parse and rewrite every source; raises (before anything is written) on the first bad input."""
    files = []
    for source in sources:
        documents: list[Document] = []
        for document, doc in parse_documents(source.text, source.name):
            documents.append(migrate_document(document, doc, source.name))
        files.append(FileResult(source, documents))
    return files


def migrate(sources: list[Source], cluster: Cluster | None = None, namespace: str = "default") -> Migration:
    """Rewrite ``sources`` and, with a cluster, say which road fits it for each workload."""
    files = rewrite_sources(sources)
    result = Migration(files, None)
    for f, _, d in result.workloads():
        result.notes += [f"{d.workload.label}: {n}" for n in d.plan.notes]
        if d.workload.other_nvidia:
            result.notes.append(f"{d.workload.label}: left as they are: {', '.join(d.workload.other_nvidia)}")
        pods = d.workload.asking_pods()
        if len(pods) > 1:
            result.notes.append(f"{d.workload.label}: the roads below are checked for its {pods[0]!r} pods; "
                                f"{', '.join(repr(p) for p in pods[1:])} ask too")
        if d.workload.kind == "Pod":
            result.notes.append(f"{d.workload.label}: a pod's spec cannot change; delete the pod and create it from "
                                "the rewritten manifest")
    if cluster is not None and result.workloads():
        result.facts = read_facts(cluster, namespace)
        for f, i, d in result.workloads():
            first = d.workload.asking_pods()[0]
            result.roads[(f.source.name, i)] = assess(result.facts, d.workload.only(first), d.plan.only(first),
                                                      pod_spec(d.parsed, d.workload.pods[first]) or {})
    return result
