"""drawb's RBAC manifest on the real control plane: a ServiceAccount bound by it, with a TokenRequest
token in its own kubeconfig, reads every view and runs a check in its namespace; what RBAC refuses
is named (verb, resource, namespace, user) with the drawb role that grants it, on both front ends."""

from __future__ import annotations

import json

import pytest
import yaml

from drawb.access import rbac
from drawb.cli import main
from drawb.testing.api import path_for
from tests.live.accounts import Withheld, service_account, token_kubeconfig

pytestmark = pytest.mark.live
ACCOUNT = "drawb-tester"


class Restricted(Withheld):
    """(namespace, other namespace, kubeconfig, token); its repr leaves the token out."""

    SHOWN = 3


@pytest.fixture(scope="module")
def restricted(control_plane, tmp_path_factory):
    """(namespace, another namespace, kubeconfig path, token) of a ServiceAccount bound by drawb's manifest alone."""
    api = control_plane.api()
    home, other = control_plane.create_namespace("rbac-home"), control_plane.create_namespace("rbac-other")
    service_account(control_plane, home, ACCOUNT)
    manifest = rbac.to_yaml(rbac.manifest(home, rbac.subject(service_account=ACCOUNT, namespace=home)))
    control_plane.kubectl("apply", "-f", "-", input=manifest)
    path, token = token_kubeconfig(control_plane, home, ACCOUNT, tmp_path_factory.mktemp("rbac") / "restricted.kubeconfig",
                                   default_namespace=home, context="restricted")
    yield Restricted(home, other, str(path), token)
    for obj in reversed(list(yaml.safe_load_all(manifest))):
        kind, meta = obj["kind"], obj["metadata"]
        control_plane.kubectl("delete", kind.lower(), meta["name"], *(["-n", meta["namespace"]] if "namespace" in meta
                                                                       else []), "--ignore-not-found", check=False)
    for name in (home, other):
        api.delete(path_for("Namespace", name))


def _drawb(capsys, kubeconfig: str, namespace: str, *words: str) -> tuple[int, str, str]:
    status = main(["--kubeconfig", kubeconfig, "-n", namespace, *words])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_restricted_user_reads_every_view(restricted, capsys):
    home, _, kubeconfig, token = restricted
    for words, expect in ((["devices"], "gpu"), (["slices"], "gpu.nvidia.com"), (["classes"], "gpu.nvidia.com"),
                          (["attrs"], "productName"), (["claims"], ""), (["claims", "-n", home], ""),
                          (["pods", "-n", home], "")):
        status, out, err = _drawb(capsys, kubeconfig, home, *words)
        assert status == 0, (words, err)
        assert expect in out and "Traceback" not in err and "RbacRefused" not in err, (words, err)
    # pods in every namespace are outside the manifest: the view falls back to the session's namespace, saying so
    status, out, err = _drawb(capsys, kubeconfig, home, "pods", "-A")
    assert status == 0
    assert f'RbacRefused: list on pods in all namespaces was refused for user "system:serviceaccount:{home}:{ACCOUNT}"; ' \
           f"showing namespace {home} only" in err


def test_restricted_user_runs_doctor_as_far_as_its_role_allows(restricted, capsys):
    home, _, kubeconfig, _ = restricted
    status, out, err = _drawb(capsys, kubeconfig, home, "doctor", "--json")
    assert "Traceback" not in err, err
    report = json.loads(out)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["NVIDIA DeviceClasses"]["status"] == "PASS" and checks["GPU nodes publish slices"]["status"] == "PASS"
    assert checks["access"]["status"] == "WARN" and f"pods read in namespace {home} only" in checks["access"]["evidence"]
    # the claim probes are dry-run creates in its own namespace, which the Role allows
    assert "RBAC refused" not in checks["DRAPrioritizedList"]["evidence"]
    assert status in (0, 1)


def test_restricted_user_checks_a_gpu_in_its_namespace(restricted, capsys):
    home, _, kubeconfig, _ = restricted
    status, out, err = _drawb(capsys, kubeconfig, home, "check", "single-gpu", "--timeout", "90", "--json")
    assert out, err
    verdict = json.loads(out)
    assert (status, verdict["status"]) == (0, "PASS"), (verdict, err)


def test_denied_actions_name_verb_resource_namespace_and_the_granting_role(restricted, capsys, shell):
    home, other, kubeconfig, _ = restricted
    user = f"system:serviceaccount:{home}:{ACCOUNT}"
    status, out, err = _drawb(capsys, kubeconfig, home, "check", "single-gpu", "-n", other, "--timeout", "30")
    assert status == 2 and "Traceback" not in err
    # check asks first (SelfSubjectRulesReview) and names every right it lacks there, before it writes anything
    assert (f'RightsMissing: drawb check needs rights RBAC does not give user "{user}": get on pods, create on pods, '
            f'patch on pods, delete on pods, get on pods/log, get on resourceclaimtemplates.resource.k8s.io, create on '
            f'resourceclaimtemplates.resource.k8s.io, patch on resourceclaimtemplates.resource.k8s.io, delete on '
            f'resourceclaimtemplates.resource.k8s.io in namespace "{other}"; nothing was written') in err
    assert f"drawb rbac -n {other} --service-account {home}:{ACCOUNT} | kubectl apply -f -" in err
    shell.run(f"%config DRAMagics.kubeconfig = {kubeconfig!r}")
    shown = shell.fails(f"%dra check single-gpu -n {other} --timeout 30")
    assert f'RightsMissing: %dra check needs rights RBAC does not give user "{user}": get on pods' in shown
    assert f"%dra rbac -n {other} --service-account {home}:{ACCOUNT}" in shown and "Traceback" not in shown


def test_the_token_never_reaches_the_output(restricted, capsys):
    home, other, kubeconfig, token = restricted
    outputs = [_drawb(capsys, kubeconfig, home, *words) for words in (["connect", "--kubeconfig", kubeconfig],
                                                                    ["pods", "-n", other], ["doctor"])]
    assert outputs[1][0] == 2 and "RBAC refused list on pods" in outputs[1][2]
    assert all(token not in out + err for _, out, err in outputs)


def test_without_the_cluster_role_views_say_what_is_missing_and_doctor_degrades(control_plane, restricted, capsys,
                                                                                 tmp_path):
    home, _, kubeconfig, _ = restricted
    account = "role-only"
    service_account(control_plane, home, account)
    role_only = [o for o in rbac.manifest(home, rbac.subject(service_account=account, namespace=home))
                 if o["kind"] == "RoleBinding"]  # the Role exists already; no ClusterRoleBinding
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(role_only))
    path, token = token_kubeconfig(control_plane, home, account, tmp_path / "role-only.kubeconfig",
                                   default_namespace=home)
    user = f"system:serviceaccount:{home}:{account}"
    status, _, err = _drawb(capsys, str(path), home, "devices")
    assert status == 2 and "Traceback" not in err
    assert (f'RBAC refused list on resourceslices.resource.k8s.io at the cluster scope for user "{user}"; the '
            "drawb-reader ClusterRole of drawb's RBAC manifest grants it") in err
    status, out, err = _drawb(capsys, str(path), home, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert "RBAC refused list on nodes at the cluster scope" in checks["access"]["evidence"]
    assert "GPU nodes publish slices" not in checks  # skipped: it needs the nodes
    assert token not in out + err


def test_doctor_without_any_permission_fails(control_plane, restricted, capsys, tmp_path):
    home, _, kubeconfig, _ = restricted
    account = "no-role"
    service_account(control_plane, home, account)
    path, token = token_kubeconfig(control_plane, home, account, tmp_path / "no-role.kubeconfig",
                                   default_namespace=home)
    status, out, err = _drawb(capsys, str(path), home, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(out)["checks"]}
    assert status == 1, err  # doctor could not read what it checks: no verdict of readiness
    assert checks["access"]["status"] == "FAIL"
    assert "RBAC refused list on nodes at the cluster scope" in checks["access"]["evidence"]
    status, out, _ = _drawb(capsys, str(path), home, "doctor")
    assert status == 1 and "FAIL" in out
