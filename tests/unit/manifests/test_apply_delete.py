"""``apply`` and ``delete`` on the simulated cluster, through both front ends."""

from __future__ import annotations

import pytest

from drawb.cli import main

MANIFESTS = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
  namespace: gpu-test
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: shared-gpu
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
"""


@pytest.fixture
def manifests(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(MANIFESTS)
    return path


def session_of(shell):
    return shell.ipython.magics_manager.registry["DRAMagics"].session


def test_apply_keeps_each_documents_namespace(shell, manifests):
    shell.run("%config DRAMagics.namespace = 'gpu-demo'")
    applied = shell.run(f"%dra apply {manifests}")
    assert applied.status == "applied: 2 object(s), accepted by the simulated cluster (Kubernetes 1.34 rules)"
    assert applied.rows() == [("ResourceClaimTemplate", "gpu-test", "one-gpu"), ("ResourceClaim", "gpu-demo", "shared-gpu")]
    cluster = session_of(shell).cluster
    assert cluster.get("ResourceClaimTemplate", "one-gpu", "gpu-test") is not None
    assert cluster.get("ResourceClaimTemplate", "one-gpu", "gpu-demo") is None
    assert cluster.get("ResourceClaim", "shared-gpu", "gpu-demo")["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "drawb"}


def test_namespace_flag_fills_a_missing_namespace_and_refuses_a_conflict(shell, manifests):
    err = shell.fails(f"%dra apply {manifests} -n default")
    assert err.splitlines()[0] == "UsageError: ResourceClaimTemplate/one-gpu is in namespace 'gpu-test', but -n says 'default'"
    cluster = session_of(shell).cluster
    assert cluster.list("ResourceClaim", "default") == [] and cluster.get("ResourceClaimTemplate", "one-gpu", "gpu-test") is None
    applied = shell.run(f"%dra apply {manifests} -n gpu-test --dry-run")
    assert applied.status.startswith("dry run: 2 object(s)") and cluster.get("ResourceClaim", "shared-gpu", "gpu-test") is None
    shell.run("%%dra apply -n default\n" + MANIFESTS.split("---\n")[1])
    assert cluster.get("ResourceClaim", "shared-gpu", "default") is not None


def test_invalid_manifests_are_not_applied(shell, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(MANIFESTS.replace("deviceClassName: gpu.nvidia.com\n---", "deviceClassName: gpu.nvidia.com\n"
                                      "          counts: 2\n---"))
    err = shell.fails(f"%dra apply {path}")
    assert err.startswith("InvalidManifest: 1 error(s) in the manifests:\n  - error: ")
    assert "unknown field(s) 'counts'" in err and "nothing was applied" in err
    assert session_of(shell).cluster.get("ResourceClaimTemplate", "one-gpu", "gpu-test") is None


def test_a_class_the_cluster_lacks_is_applied_with_a_warning_and_a_missing_namespace_refused(shell, tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text(MANIFESTS.replace("deviceClassName: gpu.nvidia.com\n---", "deviceClassName: gpu.nvidia.cmo\n---"))
    out = shell.run(f"%dra apply {path} --dry-run")
    assert "DeviceClass 'gpu.nvidia.cmo' is not installed" in str(out.warnings) and "did you mean 'gpu.nvidia.com'?" in str(out.warnings)
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text(MANIFESTS.replace("namespace: gpu-test", "namespace: nowhere"))
    validated = shell.run(f"%dra validate {elsewhere}")
    assert validated.exit_status == 0 and "namespace 'nowhere' does not exist in the connected cluster" in str(validated)
    err = shell.fails(f"%dra apply {elsewhere} --dry-run")
    assert 'namespaces "nowhere" not found' in err


def test_command_line_apply_prints_status_on_stderr(manifests, capsys):
    assert main(["apply", "-f", str(manifests), "-n", "gpu-test"]) == 0
    out = capsys.readouterr()
    assert "applied: 2 object(s), accepted by the simulated cluster (Kubernetes 1.34 rules)" in out.err
    assert [line.split() for line in out.out.splitlines()] == [["ResourceClaimTemplate/one-gpu", "gpu-test"],
                                                               ["ResourceClaim/shared-gpu", "gpu-test"]]
    assert main(["apply", "-f", str(manifests), "-n", "ml"]) == 2
    assert capsys.readouterr().err.startswith("UsageError: ResourceClaimTemplate/one-gpu is in namespace 'gpu-test'")


def test_delete_only_what_drawb_created(shell, manifests):
    shell.run(f"%dra apply {manifests}")
    assert repr(shell.run("%dra delete resourceclaimtemplate one-gpu -n gpu-test")) == (
        "deleted resourceclaimtemplate/one-gpu in namespace gpu-test")
    assert repr(shell.run("%dra delete ResourceClaim/shared-gpu")) == "deleted resourceclaim/shared-gpu in namespace default"
    err = shell.fails("%dra delete deviceclass gpu.nvidia.com")
    assert err.splitlines() == ["NotManagedByDrawb: DeviceClass 'gpu.nvidia.com' was not created by drawb; refusing to "
                                "delete it", "Hint: add --force-unmanaged to delete it anyway"]
    assert repr(shell.run("%dra delete deviceclass gpu.nvidia.com --force-unmanaged")) == "deleted deviceclass/gpu.nvidia.com"
    assert session_of(shell).cluster.get("DeviceClass", "gpu.nvidia.com") is None
    err = shell.fails("%dra delete pod nope")
    assert err.splitlines()[0] == "ClusterError: no Pod 'nope' in namespace 'default'"
    err = shell.fails("%dra delete gadget x")
    assert err.splitlines()[0] == "UsageError: unknown kind 'gadget'"


def test_apply_into_a_missing_namespace_is_refused_as_a_real_cluster_refuses_it(shell, manifests, capsys):
    text = MANIFESTS.replace("gpu-test", "team-x")
    err = shell.fails("%%dra apply\n" + text)
    assert err.splitlines()[0] == ('ClusterError: <cell> document 1 (ResourceClaimTemplate/one-gpu) was refused: '
                                   'namespaces "team-x" not found')
    assert "apply a Namespace named 'team-x'" in err
    assert session_of(shell).cluster.get("ResourceClaim", "shared-gpu", "default") is None
    whole = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-x\n---\n" + text
    applied = shell.run("%%dra apply\n" + whole)
    assert applied.rows()[:2] == [("Namespace", "", "team-x"), ("ResourceClaimTemplate", "team-x", "one-gpu")]
    path = manifests.parent / "elsewhere.yaml"
    path.write_text(MANIFESTS.replace("gpu-test", "team-y"))
    assert main(["apply", "-f", str(path)]) != 0
    assert 'namespaces "team-y" not found' in capsys.readouterr().err


def test_a_refusal_names_the_file_and_the_document(manifests, capsys):
    other = manifests.parent / "other.yaml"
    other.write_text(MANIFESTS.split("---\n")[0].replace("gpu-test", "team-z").replace("one-gpu", "two-gpu"))
    assert main(["apply", "-f", str(manifests), "-f", str(other)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == (
        f"ClusterError: {other} document 1 (ResourceClaimTemplate/two-gpu) was refused: namespaces \"team-z\" not found")


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: gpu-test
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: one-gpu
      containers:
      - name: ctr
        image: ubuntu:24.04
        command: [sleep, infinity]
        resources:
          claims: [{name: gpu}]
"""


def test_applying_a_workload_says_its_controllers_make_the_pods(shell, tmp_path):
    path = tmp_path / "web.yaml"
    path.write_text(MANIFESTS.split("---")[0] + "---\n" + DEPLOYMENT)
    dry = shell.run(f"%dra apply {path} --dry-run")
    assert dry.notes == []
    applied = shell.run(f"%dra apply {path}")
    assert applied.notes == ["Deployment/web: the cluster's controllers create the pods; follow them with "
                             "`%dra pods --all -n gpu-test` and `%dra events -n gpu-test`"]
    pods = session_of(shell).cluster.list("Pod", "gpu-test")
    assert len(pods) == 2 and all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet" for p in pods)
