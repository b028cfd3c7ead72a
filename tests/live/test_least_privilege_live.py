"""Fewer rights than drawb's RBAC manifest, on the real control plane: a ServiceAccount with no rights and one
with the read-only ClusterRole alone. Reads name the verb and resource RBAC refused; write commands (check,
apply, delete) ask the API server first (SelfSubjectRulesReview) and name every right they lack before
they write anything, so nothing is half-done."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drawb import versions
from drawb.access import rbac
from drawb.cli import main
from drawb.testing.api import path_for
from tests.live.accounts import Withheld, service_account, token_kubeconfig

pytestmark = pytest.mark.live
TEMPLATE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""


class Account(Withheld):
    """(namespace, name, kubeconfig) of a ServiceAccount; its repr leaves the kubeconfig out."""

    SHOWN = 2


def _account(control_plane, home: str, name: str, folder) -> Account:
    service_account(control_plane, home, name)
    path, _ = token_kubeconfig(control_plane, home, name, folder / f"{name}.kubeconfig", default_namespace=home)
    return Account(home, name, str(path))


LEGACY = Path(__file__).resolve().parents[1] / "data" / "migrate" / "01-deployment-single-gpu.yaml"


@pytest.fixture(scope="module")
def accounts(control_plane, tmp_path_factory):
    """(nobody, reader): no rights at all; drawb's read-only ClusterRole alone."""
    home = control_plane.create_namespace("least")
    folder = tmp_path_factory.mktemp("least")
    nobody = _account(control_plane, home, "nobody", folder)
    reader = _account(control_plane, home, "reader", folder)
    objects = rbac.manifest(home, rbac.subject(service_account="reader", namespace=home))
    control_plane.kubectl("apply", "-f", "-", input=yaml.safe_dump_all(
        [o for o in objects if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]))
    yield nobody, reader
    for obj in objects:
        if obj["kind"] == "ClusterRoleBinding":
            control_plane.kubectl("delete", "clusterrolebinding", obj["metadata"]["name"], "--ignore-not-found",
                                  check=False)
    control_plane.api().delete(path_for("Namespace", home))


def _drawb(capsys, account: Account, *words: str) -> tuple[int, str, str]:
    status = main(["--kubeconfig", account[2], *words])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _nothing_written(control_plane, namespace: str) -> None:
    for kind in ("resourceclaimtemplates", "resourceclaims", "pods"):
        listed = control_plane.kubectl("get", kind, "-n", namespace, "-o", "name").stdout.strip()
        assert listed == "", (kind, listed)


def test_without_any_right_reads_name_what_rbac_refused(accounts, capsys):
    nobody, _ = accounts
    user = f"system:serviceaccount:{nobody[0]}:nobody"
    status, out, err = _drawb(capsys, nobody, "devices")
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.startswith(f'RbacRefused: RBAC refused list on resourceslices.resource.k8s.io at the cluster scope '
                          f'for user "{user}"; the drawb-reader ClusterRole of drawb\'s RBAC manifest grants it'), err


@pytest.mark.parametrize("who", ["nobody", "reader"])
def test_write_commands_name_every_missing_right_before_writing(control_plane, accounts, capsys, tmp_path, who):
    account = dict(zip(("nobody", "reader"), accounts))[who]
    home, name, _ = account
    user = f"system:serviceaccount:{home}:{name}"
    status, out, err = _drawb(capsys, account, "check", "single-gpu", "--timeout", "30")
    assert status == 2 and "Traceback" not in err, err
    assert (f'RightsMissing: drawb check needs rights RBAC does not give user "{user}": get on pods, create on pods, '
            f'patch on pods, delete on pods, get on pods/log, get on resourceclaimtemplates.resource.k8s.io, create on '
            f'resourceclaimtemplates.resource.k8s.io, patch on resourceclaimtemplates.resource.k8s.io, delete on '
            f'resourceclaimtemplates.resource.k8s.io in namespace "{home}"; nothing was written') in err, err
    assert f"Hint: ask a cluster admin to apply drawb's RBAC manifest: drawb rbac -n {home} --service-account " \
           f"{home}:{name} | kubectl apply -f -" in err
    manifest = tmp_path / "template.yaml"
    manifest.write_text(TEMPLATE)
    status, out, err = _drawb(capsys, account, "apply", "-f", str(manifest))
    assert status == 2 and (f'RightsMissing: drawb apply needs rights RBAC does not give user "{user}": get on '
                            f'resourceclaimtemplates.resource.k8s.io, create on resourceclaimtemplates.resource.k8s.io,'
                            f' patch on resourceclaimtemplates.resource.k8s.io in namespace "{home}"') in err, err
    status, out, err = _drawb(capsys, account, "migrate", str(LEGACY), "--apply")
    assert status == 2 and "Traceback" not in err, err
    if who == "reader":  # it reads the cluster's devices, then asks for the rights its apply needs
        assert (f'RightsMissing: drawb migrate needs rights RBAC does not give user "{user}": ' in err
                and "create on resourceclaimtemplates.resource.k8s.io" in err and "nothing was written" in err), err
    else:  # it cannot even read the devices the rewrite is checked against
        assert err.startswith("RbacRefused: RBAC refused list on "), err
    status, out, err = _drawb(capsys, account, "render", "single-gpu", "-n", home, "--apply")
    assert status == 2 and "Traceback" not in err, err
    if who == "reader":  # it checks the manifests against the cluster's classes, then asks for the rights to apply
        assert err.startswith(f'RightsMissing: drawb render needs rights RBAC does not give user "{user}": '), err
        assert "create on resourceclaimtemplates.resource.k8s.io" in err and "create on pods" in err, err
    else:  # it cannot even read the classes the manifests are checked against
        assert err.startswith("RbacRefused: RBAC refused list on "), err
    status, out, err = _drawb(capsys, account, "doctor", "--live", "-n", home)
    assert status == 2 and err.startswith(f'RightsMissing: drawb doctor --live needs rights RBAC does not give user '
                                          f'"{user}": '), err
    assert all(right in err for right in ("create on resourceclaims.resource.k8s.io", "delete on pods",
                                          f'in namespace "{home}"; nothing was written')), err
    status, out, err = _drawb(capsys, account, "delete", "pod", "cuda-check")
    assert status == 2 and "RightsMissing: drawb delete needs rights" in err and "delete on pods" in err, err
    _nothing_written(control_plane, home)


def test_read_only_rights_read_every_cluster_wide_view(accounts, capsys):
    _, reader = accounts
    for words in (["devices"], ["slices"], ["classes"], ["attrs"], ["claims", "-A"], ["nodes"]):
        status, out, err = _drawb(capsys, reader, *words)
        assert status == 0 and "Traceback" not in err and "RbacRefused" not in err, (words, err)
    status, out, err = _drawb(capsys, reader, "pods")
    assert status == 2 and f'RBAC refused list on pods in namespace "{reader[0]}"' in err, err


def test_upgrade_check_with_read_only_rights_checks_what_it_reads_and_names_what_it_could_not(accounts, capsys):
    _, reader = accounts
    status, out, err = _drawb(capsys, reader, "upgrade-check", "--to", versions.newest())
    assert status == 0 and "Traceback" not in err and "RbacRefused" not in err, err
    for kind in ("ResourceClaimTemplate", "ClusterRole", "Role"):
        assert f"note: {kind}s could not be read (RBAC refused list on {kind.lower()}s." in out, out
    assert "feature gates could not be read" not in out  # the read-only role grants the API server's /metrics


def test_cleanup_with_rights_to_list_but_not_delete_names_them_and_removes_nothing(control_plane, accounts, capsys):
    from tests.live.test_cleanup_live import KINDS, Drawb, run_objects

    home = accounts[0][0]
    lister = _account(control_plane, home, "lister", Path(accounts[0][2]).parent)
    control_plane.kubectl("create", "role", "lister", "-n", home, "--verb=get,list,watch",
                          "--resource=pods,resourceclaims.resource.k8s.io,resourceclaimtemplates.resource.k8s.io")
    control_plane.kubectl("create", "rolebinding", "lister", "-n", home, "--role=lister",
                          f"--serviceaccount={home}:lister")
    killed = Drawb("--kubeconfig", str(control_plane.kubeconfig), "check", "-n", home, "--count", "12",
                   "--timeout", "300")
    try:
        run = killed.wait_for_line(r"\(run (\w+)\)")[1]
        killed.wait_for_line(r"\] pending ")  # no node has 12 GPUs: it waits
    finally:
        killed.proc.kill()
        killed.proc.wait(timeout=30)
    api = control_plane.api()
    left = run_objects(api, home, run)
    assert {kind for kind, _ in left} == set(KINDS), left
    status, out, err = _drawb(capsys, lister, "cleanup")
    assert status == 2 and (f'RightsMissing: drawb cleanup needs rights RBAC does not give user '
                            f'"system:serviceaccount:{home}:lister": delete on pods, delete on resourceclaims.'
                            'resource.k8s.io, delete on resourceclaimtemplates.resource.k8s.io in namespace '
                            f'"{home}"; nothing was written') in err, err
    assert run_objects(api, home, run) == left  # nothing removed
    assert main(["--kubeconfig", str(control_plane.kubeconfig), "cleanup", "-n", home]) == 0
    capsys.readouterr()


def test_devices_without_the_right_to_read_claims_shows_the_devices_and_says_what_is_missing(control_plane, accounts,
                                                                                           capsys):
    home = accounts[0][0]
    viewer = _account(control_plane, home, "viewer", Path(accounts[0][2]).parent)
    role = f"drawb-test-slices-{home}"
    control_plane.kubectl("create", "clusterrole", role, "--verb=get,list,watch",
                          "--resource=resourceslices.resource.k8s.io,deviceclasses.resource.k8s.io")
    control_plane.kubectl("create", "clusterrolebinding", role, f"--clusterrole={role}",
                          f"--serviceaccount={home}:viewer")
    try:
        status, out, err = _drawb(capsys, viewer, "devices")
    finally:
        control_plane.kubectl("delete", "clusterrolebinding", role, check=False)
        control_plane.kubectl("delete", "clusterrole", role, check=False)
    assert status == 0 and "gpu" in out and "Traceback" not in err, err
    assert (f'RbacRefused: list on resourceclaims was refused for user "system:serviceaccount:{home}:viewer"; the '
            "devices are shown without their allocations") in err, err
