"""``validate``, ``apply`` and ``delete`` of the user's own manifests against the real API server."""

from __future__ import annotations

import pytest

from drawb.cli import main
from drawb.testing.api import path_for

pytestmark = pytest.mark.live

TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: team-gpu
  namespace: {namespace}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: {device_class}
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
def other_namespace(control_plane):
    name = control_plane.create_namespace("trust-other")
    yield name
    control_plane.api().delete(path_for("Namespace", name))


def test_apply_keeps_each_documents_namespace_on_the_api_server(control_plane, namespace, other_namespace, tmp_path,
                                                                  capsys):
    path = tmp_path / "team.yaml"
    path.write_text(TEMPLATE.format(namespace=other_namespace, device_class="gpu.nvidia.com"))
    kubeconfig = ["--kubeconfig", str(control_plane.kubeconfig), "--namespace", namespace]
    api = control_plane.api()

    assert main([*kubeconfig, "apply", "-f", str(path), "-n", "elsewhere"]) == 2
    assert capsys.readouterr().err.startswith(
        f"UsageError: ResourceClaimTemplate/team-gpu is in namespace '{other_namespace}', but -n says 'elsewhere'")
    assert main([*kubeconfig, "apply", "-f", str(path), "--dry-run"]) == 0
    assert "dry run: 2 object(s), accepted by the API server" in capsys.readouterr().err
    assert api.get_or_none(path_for("ResourceClaimTemplate", "team-gpu", other_namespace)) is None

    assert main([*kubeconfig, "apply", "-f", str(path)]) == 0
    out = capsys.readouterr()
    assert "applied: 2 object(s), accepted by the API server" in out.err and "simulated" not in out.err
    template = api.get_or_none(path_for("ResourceClaimTemplate", "team-gpu", other_namespace))
    assert template["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "drawb"
    assert api.get_or_none(path_for("ResourceClaimTemplate", "team-gpu", namespace)) is None
    assert api.get_or_none(path_for("ResourceClaim", "shared-gpu", namespace)) is not None  # a missing one: --namespace's

    assert main([*kubeconfig, "delete", "resourceclaimtemplate", "team-gpu", "-n", other_namespace]) == 0
    assert main([*kubeconfig, "delete", "resourceclaim/shared-gpu"]) == 0
    assert api.get_or_none(path_for("ResourceClaimTemplate", "team-gpu", other_namespace)) is None
    # the test's namespace was made without drawb's label (the control plane's DeviceClasses carry it:
    # its fake driver installs them through drawb, so they are no test of the refusal, and are shared)
    assert main([*kubeconfig, "delete", "namespace", namespace]) == 2
    assert capsys.readouterr().err.splitlines()[-2:] == [
        f"NotManagedByDrawb: Namespace '{namespace}' was not created by drawb; refusing to delete it",
        "Hint: add --force-unmanaged to delete it anyway"]
    assert api.get_or_none(path_for("Namespace", namespace)) is not None


def test_validate_checks_against_the_real_clusters_classes_and_devices(control_plane, tmp_path, capsys):
    path = tmp_path / "typo.yaml"
    path.write_text(TEMPLATE.format(namespace="default", device_class="gpu.nvidia.cmo"))
    assert main(["--kubeconfig", str(control_plane.kubeconfig), "validate", str(path)]) == 0  # the server accepts it
    out = capsys.readouterr()
    assert "warning: " in out.out and "DeviceClass 'gpu.nvidia.cmo' is not installed in the connected cluster" in out.out
    assert "did you mean 'gpu.nvidia.com'?" in out.out
    assert "checked against Kubernetes v1.34" in out.out and "simulated" not in out.out + out.err
