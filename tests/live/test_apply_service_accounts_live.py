"""``drawb apply`` of a Pod and the ServiceAccount it runs as, against the real API server: the ServiceAccount
admission plugin refuses a pod whose account does not exist, and a dry run creates nothing, so a Pod after
its new ServiceAccount is checked when applied (as ``kubectl apply -f`` creates them in order); one before its
ServiceAccount, or naming one that exists nowhere, is refused by the dry run, and nothing is written."""

from __future__ import annotations

import pytest
import yaml

from drawb.cli import main
from drawb.testing.api import path_for

pytestmark = pytest.mark.live


def account(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}


def pod(name: str, spec: dict) -> dict:
    container = {"name": "main", "image": "registry.k8s.io/pause:3.10"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container], **spec}}


@pytest.fixture
def apply(control_plane, namespace, tmp_path, capsys):
    """``drawb apply -f`` of documents written to a file, into the test's namespace: the exit code, stderr and
    the file's path."""
    def run(*documents: dict, dry_run: bool = False) -> tuple[int, str, str]:
        path = tmp_path / "manifest.yaml"
        path.write_text(yaml.safe_dump_all(documents))
        code = main(["--kubeconfig", str(control_plane.kubeconfig), "--namespace", namespace,
                     "apply", "-f", str(path), *(["--dry-run"] if dry_run else [])])
        return code, capsys.readouterr().err, str(path)
    return run


def test_a_pod_is_applied_after_the_service_account_before_it(control_plane, namespace, apply):
    code, err, _ = apply(account("runner"), pod("withsa", {"serviceAccountName": "runner"}),
                         account("old-style"), pod("deprecated", {"serviceAccount": "old-style"}))
    assert code == 0, err
    assert "applied: 4 object(s), accepted by the API server" in err
    api = control_plane.api()
    assert api.get(path_for("Pod", "withsa", namespace))["spec"]["serviceAccountName"] == "runner"
    assert api.get(path_for("Pod", "deprecated", namespace))["spec"]["serviceAccountName"] == "old-style"


def test_a_pod_before_its_service_account_is_refused_and_nothing_is_left(control_plane, namespace, apply):
    code, err, path = apply(pod("early", {"serviceAccountName": "runner2"}), account("runner2"))
    assert code == 2
    assert err.splitlines()[0] == (
        f'ClusterError: {path} document 1 (Pod/early) was refused: pods "early" is forbidden: error looking up '
        f'service account {namespace}/runner2: serviceaccount "runner2" not found (HTTP 403)')
    api = control_plane.api()
    assert api.get_or_none(path_for("Pod", "early", namespace)) is None
    assert api.get_or_none(path_for("ServiceAccount", "runner2", namespace)) is None


def test_a_pod_of_an_account_that_exists_nowhere_is_refused_by_the_dry_run(control_plane, namespace, apply):
    code, err, path = apply(account("unrelated"), pod("orphan", {"serviceAccountName": "nobody"}))
    assert code == 2
    assert err.splitlines()[0] == (
        f'ClusterError: {path} document 2 (Pod/orphan) was refused: pods "orphan" is forbidden: error looking up '
        f'service account {namespace}/nobody: serviceaccount "nobody" not found (HTTP 403)')
    assert "rolled back" not in err  # refused before any write
    api = control_plane.api()
    assert api.get_or_none(path_for("ServiceAccount", "unrelated", namespace)) is None
    assert api.get_or_none(path_for("Pod", "orphan", namespace)) is None


def test_a_pod_refused_when_applied_rolls_back_its_service_account(control_plane, namespace, apply):
    invalid = pod("bad", {"serviceAccountName": "runner3"})
    invalid["spec"]["containers"][0]["image"] = ""  # checked only now: the dry run skipped this pod
    code, err, path = apply(account("runner3"), invalid)
    assert code == 2
    assert err.splitlines()[0].startswith(f'ClusterError: {path} document 2 (Pod/bad) was refused: Pod "bad" is invalid')
    assert "rolled back apply run" in err
    assert control_plane.api().get_or_none(path_for("ServiceAccount", "runner3", namespace)) is None


def test_a_dry_run_says_which_pods_the_server_could_not_check_yet(control_plane, namespace, apply):
    code, err, _ = apply(account("later"), pod("waits", {"serviceAccountName": "later"}), pod("plain", {}),
                         dry_run=True)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "dry run: 3 object(s), accepted by the API server; 1 of them not checked yet (in a Namespace, or running "
        "as a ServiceAccount, that this apply creates: the server checks them when they are applied)")
    assert control_plane.api().get_or_none(path_for("ServiceAccount", "later", namespace)) is None
    code, err, _ = apply(pod("plain", {}), dry_run=True)
    assert code == 0 and err.splitlines()[0] == "dry run: 1 object(s), accepted by the API server", err
