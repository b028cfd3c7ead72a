"""Workloads of custom kinds (Kubeflow, JobSet, LeaderWorkerSet, KubeRay): ``validate`` warns that the target must
have the kind installed and still checks the pod templates at the paths each kind uses; other kinds outside
Kubernetes' own groups are a named warning, a kind unknown in one of its own groups stays an error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drawb.api.workloads import dotted, pod_specs
from drawb.cli import main
from drawb.render import validate_documents
from tests.conftest import DATA

KINDS = DATA / "custom-kinds"


def _docs(name: str) -> list[dict]:
    return list(yaml.safe_load_all((KINDS / name).read_text()))


def test_pod_templates_are_found_where_each_kind_keeps_them():
    found = {d["kind"]: [dotted(p.path) for p in pod_specs(d)] for d in _docs("ml-kinds-dra.yaml") + _docs("pytorchjob-dra.yaml")}
    assert found == {
        "JobSet": ["spec.replicatedJobs[0].template.spec.template.spec"],
        "LeaderWorkerSet": ["spec.leaderWorkerTemplate.leaderTemplate.spec", "spec.leaderWorkerTemplate.workerTemplate.spec"],
        "RayCluster": ["spec.headGroupSpec.template.spec", "spec.workerGroupSpecs[0].template.spec"],
        "RayJob": ["spec.rayClusterSpec.headGroupSpec.template.spec", "spec.rayClusterSpec.workerGroupSpecs[0].template.spec"],
        "Widget": [], "ResourceClaimTemplate": [],
        "PyTorchJob": ["spec.pytorchReplicaSpecs.Master.template.spec", "spec.pytorchReplicaSpecs.Worker.template.spec"],
    }
    job = {"apiVersion": "example.com/v1", "kind": "PyTorchJob", "spec": {"pytorchReplicaSpecs": {"W": {"template": {"spec": {}}}}}}
    assert pod_specs(job) == []  # a kind of that name in another group is not Kubeflow's
    labels = [p.label for d in _docs("ml-kinds-dra.yaml") + _docs("pytorchjob-dra.yaml") for p in pod_specs(d)]
    assert labels == ["workers", "leader", "worker", "head", "gpu-workers", "head", "gpu-workers", "Master", "Worker"]


def test_validate_warns_about_custom_kinds_and_checks_their_pods(capsys):
    status = main(["validate", "--no-cluster", str(KINDS / "ml-kinds-dra.yaml"), str(KINDS / "pytorchjob-dra.yaml")])
    out = capsys.readouterr().out
    assert status == 1
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: " + str(KINDS / "ml-kinds-dra.yaml") + ": RayJob/ray-job spec.rayClusterSpec.workerGroupSpecs[0].template.spec"
        ".containers[0].resources.claims[1]: container 'ray-worker' uses claim 'gpu2', which the pod's resourceClaims do "
        "not list; listed: gpu",
        "error: " + str(KINDS / "pytorchjob-dra.yaml") + ": PyTorchJob/ddp spec.pytorchReplicaSpecs.Worker.template.spec"
        ".containers[0].resources.claims[0]: container 'pytorch' uses claim 'gpus', which the pod's resourceClaims do "
        "not list; listed: gpu"]
    assert ("PyTorchJob/ddp: CustomResource: PyTorchJob (kubeflow.org/v1) is a custom resource: the target cluster must "
            "have the Kubeflow Training Operator installed; drawb checks only its pod templates "
            "(spec.pytorchReplicaSpecs.<each>.template.spec)") in out
    for kind in ("JobSet/trainers", "LeaderWorkerSet/vllm", "RayCluster/ray", "RayJob/ray-job"):
        assert f"{kind}: CustomResource: " in out
    assert ("Widget/w: UnknownKind: example.com/v1 Widget is not part of Kubernetes 1.34: a custom resource the target "
            "cluster must have installed (its CRD); drawb does not check it") in out


def test_custom_kinds_with_correct_pods_are_valid(tmp_path, capsys):
    for name in ("ml-kinds-dra.yaml", "pytorchjob-dra.yaml"):
        text = (KINDS / name).read_text().replace("- name: gpus   #", "- name: gpu   #").replace("\n              - name: gpu2", "")
        (tmp_path / name).write_text(text)
    assert main(["validate", "--no-cluster", str(tmp_path)]) == 0
    assert "valid: 7 document(s) in 2 file(s), 0 error(s), 6 warning(s)" in capsys.readouterr().out


@pytest.mark.parametrize("api_version,kind,words", [
    ("apps/v1", "Deploymnet", "Kubernetes 1.34 has no schema for apps/v1 Deploymnet; check apiVersion and kind"),
    ("v1", "Podd", "Kubernetes 1.34 has no schema for v1 Podd"),
    ("resource.k8s.io/v1beta9", "ResourceClaim", "resource.k8s.io/v1beta9 is not served by a Kubernetes 1.34 API server"),
    ("resource.k8s.io/v1", "ResourceClaimz", "has no schema for resource.k8s.io/v1 ResourceClaimz"),
])
def test_an_unknown_kind_in_kubernetes_own_groups_stays_an_error(api_version, kind, words):
    [issue] = validate_documents([{"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}])
    assert issue.level == "error" and words in issue.message


def test_a_connected_cluster_without_the_kinds_api_refuses_it_as_its_api_server_does():
    """The API server answers 404 for a group version it does not serve: with a cluster to ask, that is an error."""
    from drawb.cluster.sim.cluster import SimCluster

    sim = SimCluster(workloads=False)
    docs = _docs("pytorchjob-dra.yaml") + [d for d in _docs("ml-kinds-dra.yaml") if d["kind"] == "Widget"]
    found = {(i.document, i.level): i.message for i in validate_documents(docs, cluster=sim) if i.path == "apiVersion"}
    assert found[("PyTorchJob/ddp", "error")] == (
        "kubeflow.org/v1 PyTorchJob is not served by the connected cluster (its discovery has no kubeflow.org/v1): "
        "install the Kubeflow Training Operator there first; the API server refuses it until then")
    assert found[("Widget/w", "error")].startswith("example.com/v1 Widget is not served by the connected cluster")
    offline = validate_documents(docs)  # without a cluster drawb cannot know: a warning
    assert not [i for i in offline if i.path == "apiVersion"]
