"""Which cluster a plain connect opens (the target option, ``$DRAWB_TARGET``), and the real clusters it names
when it stays on the simulated one. The real connections are proven in tests/live/test_in_cluster_live.py."""

from __future__ import annotations

import base64
import json

import pytest

from drawb.cli import main
from drawb.cluster.connect import found_clusters
from drawb.cluster.service_account import HOST_ENV, MOUNT_DIR_ENV, PORT_ENV
from drawb.errors import UsageError
from drawb.session import TARGET_ENV, Session


@pytest.fixture
def pod_env(tmp_path, monkeypatch):
    """A service account mount (an unsigned token naming ``team-a/notebook``) and the service's address."""
    mount = tmp_path / "serviceaccount"
    mount.mkdir()
    claims = base64.urlsafe_b64encode(json.dumps({"sub": "system:serviceaccount:team-a:notebook"}).encode()).decode()
    (mount / "token").write_text("eyJhbGciOiJub25lIn0." + claims.rstrip("=") + ".")
    (mount / "ca.crt").write_text("not used here")
    (mount / "namespace").write_text("team-a")
    monkeypatch.setenv(MOUNT_DIR_ENV, str(mount))
    monkeypatch.setenv(HOST_ENV, "10.96.0.1")
    monkeypatch.setenv(PORT_ENV, "443")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))
    monkeypatch.delenv(TARGET_ENV, raising=False)
    return mount


def test_found_clusters_name_the_mount_and_the_current_context(pod_env, tmp_path, monkeypatch):
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: prod\ncontexts: []\n")
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    found = found_clusters()
    assert [(f.what, f.option) for f in found] == [
        ("this pod's service account team-a/notebook (API server https://10.96.0.1:443)", "--in-cluster"),
        (f"the kubeconfig's current context 'prod' ({kubeconfig})", "--context prod")]
    monkeypatch.delenv(HOST_ENV)
    assert [f.option for f in found_clusters()] == ["--context prod"]  # no API server address: not in a pod


def test_a_plain_connect_stays_simulated_and_says_what_it_found(pod_env, shell, capsys):
    shown = repr(shell.run("%dra connect"))
    assert shown.startswith("Connected to simulated cluster 'default'")
    assert shown.endswith("this pod's service account team-a/notebook (API server https://10.96.0.1:443): "
                          "%dra connect --in-cluster")
    assert main(["connect"]) == 0
    assert "drawb --in-cluster <subcommand>" in capsys.readouterr().out
    assert "Real clusters found" not in repr(shell.run("%dra connect --simulated"))


def test_the_target_comes_from_the_option_then_the_environment(monkeypatch):
    monkeypatch.delenv(TARGET_ENV, raising=False)
    assert Session().default_target() == "simulated"
    monkeypatch.setenv(TARGET_ENV, "in-cluster")
    assert Session().default_target() == "in-cluster"
    assert Session(target="kubeconfig").default_target() == "kubeconfig"
    monkeypatch.setenv(TARGET_ENV, "incluster")
    with pytest.raises(UsageError, match=r"^\$DRAWB_TARGET is 'incluster'; it must be one of simulated, in-cluster, "
                                         "kubeconfig$"):
        Session().default_target()


def test_in_cluster_outside_a_pod_says_what_is_missing(pod_env, monkeypatch, capsys):
    monkeypatch.delenv(HOST_ENV)
    assert main(["--in-cluster", "devices"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("NotInCluster: not inside a pod: KUBERNETES_SERVICE_HOST not set"), err
    assert main(["--in-cluster", "--context", "prod", "devices"]) == 2
    assert capsys.readouterr().err.startswith("UsageError: --in-cluster uses the pod's service account")
    monkeypatch.setenv(TARGET_ENV, "in-cluster")
    assert main(["devices"]) == 2  # the target is honoured: no simulated answer instead
    assert capsys.readouterr().err.startswith("NotInCluster: not inside a pod")
