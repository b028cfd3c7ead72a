"""drawb inside a pod, against the real control plane: a ServiceAccount bound by drawb's RBAC manifest, its
token and the cluster's CA written to a service account mount as the kubelet lays it out (``..data``
swapped atomically), ``KUBERNETES_SERVICE_HOST``/``_PORT`` pointed at the local API server and no
kubeconfig at all. Every read command of the docs works on both front ends, the namespace is the
service account's, the token swapped mid-session for a fresh one (the old one revoked) keeps working,
and a plain ``connect`` either says which real clusters it found or, with the in-cluster target, goes there.
"""

from __future__ import annotations

import base64
import json
import os
import time
from pathlib import Path

import pytest
import yaml

from drawb.access import rbac
from drawb.cli import main
from drawb.cluster.kube import KubeCluster
from drawb.cluster.protocol import Unauthorized
from drawb.cluster.service_account import HOST_ENV, MOUNT_DIR_ENV, PORT_ENV
from drawb.session import TARGET_ENV
from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests import credscan

pytestmark = pytest.mark.live
ACCOUNT = "notebook"
READS = (["devices"], ["devices", "--wide"], ["slices"], ["classes"], ["claims"], ["pods"], ["nodes"], ["attrs"],
         ["events"], ["select", "device.driver == 'gpu.nvidia.com'"], ["map"])


class Pod:
    """A service account mount (``directory``) and the namespace and tokens behind it; its repr shows no token."""

    def __init__(self, control_plane, namespace: str, directory: Path):
        self.control_plane, self.namespace, self.directory = control_plane, namespace, directory
        self.generation = 0

    def __repr__(self) -> str:
        return f"Pod({self.namespace!r}, {self.directory})"

    def token(self, bound_secret: str) -> str:
        """A fresh token of the ServiceAccount, valid only while Secret ``bound_secret`` exists."""
        self.control_plane.kubectl("create", "secret", "generic", bound_secret, "-n", self.namespace)
        token = self.control_plane.kubectl(
            "create", "token", ACCOUNT, "-n", self.namespace, "--duration=1h", "--bound-object-kind", "Secret",
            "--bound-object-name", bound_secret).stdout.strip()
        credscan.remember(token, f"the token of {self.namespace}/{ACCOUNT} bound to Secret {bound_secret}")
        return token

    def mount(self, token: str, ca: bytes) -> None:
        """Write the mount as the kubelet does: files in a new directory, then ``..data`` swapped to it."""
        self.generation += 1
        data = self.directory / f"..{self.generation}"
        data.mkdir()
        (data / "token").write_text(token)
        (data / "ca.crt").write_bytes(ca)
        (data / "namespace").write_text(self.namespace)
        (self.directory / "..data_tmp").symlink_to(data.name)
        os.replace(self.directory / "..data_tmp", self.directory / "..data")
        for name in ("token", "ca.crt", "namespace"):
            if not (self.directory / name).is_symlink():
                (self.directory / name).symlink_to(f"..data/{name}")


def _ca_and_server(control_plane) -> tuple[bytes, str]:
    cluster = yaml.safe_load(control_plane.kubeconfig.read_text())["clusters"][0]["cluster"]
    if "certificate-authority-data" in cluster:
        ca = base64.b64decode(cluster["certificate-authority-data"])
    else:
        ca = (control_plane.kubeconfig.parent / cluster["certificate-authority"]).read_bytes()
    return ca, cluster["server"]


@pytest.fixture(scope="module")
def pod(control_plane, tmp_path_factory):
    """A Pod whose mount holds the first token (bound to Secret ``first``), its RBAC from drawb's manifest."""
    home = control_plane.create_namespace("in-cluster")
    control_plane.api().create({"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": ACCOUNT, "namespace": home}})
    manifest = rbac.to_yaml(rbac.manifest(home, rbac.subject(service_account=ACCOUNT, namespace=home)))
    control_plane.kubectl("apply", "-f", "-", input=manifest)
    mounted = Pod(control_plane, home, tmp_path_factory.mktemp("serviceaccount"))
    mounted.mount(mounted.token("first"), _ca_and_server(control_plane)[0])
    yield mounted
    for obj in yaml.safe_load_all(manifest):
        if obj["kind"].startswith("Cluster"):
            control_plane.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], "--ignore-not-found",
                                  check=False)
    control_plane.api().delete(path_for("Namespace", home))


@pytest.fixture
def inside(pod, control_plane, monkeypatch, tmp_path):
    """The environment of a process in that pod: the mount, the service's address, no kubeconfig."""
    host_port = _ca_and_server(control_plane)[1].split("://", 1)[1]
    host, _, port = host_port.rpartition(":")
    monkeypatch.setenv(MOUNT_DIR_ENV, str(pod.directory))
    monkeypatch.setenv(HOST_ENV, host.strip("[]"))
    monkeypatch.setenv(PORT_ENV, port)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig-in-a-pod"))
    monkeypatch.delenv(TARGET_ENV, raising=False)
    return pod


def test_every_read_command_works_as_the_pods_service_account(inside, capsys):
    for words in READS:
        status = main(["--in-cluster", *words])
        captured = capsys.readouterr()
        assert status == 0, (words, captured.err)
        assert "Traceback" not in captured.err and "simulated" not in captured.err, (words, captured.err)
    status = main(["--in-cluster", "doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c["status"] for c in report["checks"]}
    assert checks["NVIDIA DeviceClasses"] == "PASS" and checks["GPU nodes publish slices"] == "PASS", report
    # the namespace is the service account's: its pods are listed, and RBAC refuses nothing there
    assert main(["--in-cluster", "pods", "--all"]) == 0
    assert "RbacRefused" not in capsys.readouterr().err


def test_the_notebook_connects_in_cluster_and_keeps_working_when_the_token_rotates(inside, control_plane, shell):
    connected = repr(shell.run("%dra connect --in-cluster"))
    assert f"(in-cluster, service account {inside.namespace}/{ACCOUNT})" in connected
    magics = shell.ipython.magics_manager.registry["DRAMagics"]
    assert magics.session.namespace == inside.namespace
    for words in READS:
        assert shell.run("%dra " + " ".join(f'"{w}"' if " " in w else w for w in words)) is not None
    first = (inside.directory / "token").read_text()
    inside.mount(inside.token("second"), _ca_and_server(control_plane)[0])  # the kubelet's rotation
    control_plane.kubectl("delete", "secret", "first", "-n", inside.namespace)  # the old token stops working
    old = KubeCluster(kubeconfig=_token_kubeconfig(control_plane, first, inside.directory.parent / "old.kubeconfig"))
    wait_for(lambda: _refused(old), what="the first token refused once its Secret is gone", timeout=60)
    cluster = magics.session.cluster
    assert cluster.server_version().startswith("v")  # the same session, with the token read again
    for words in (["pods"], ["claims"], ["events"], ["doctor"]):
        assert shell.run("%dra " + " ".join(words)) is not None, words


def _token_kubeconfig(control_plane, token: str, path: Path) -> str:
    ca, server = _ca_and_server(control_plane)
    (path.parent / "old-ca.crt").write_bytes(ca)
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "old",
        "clusters": [{"name": "c", "cluster": {"server": server, "certificate-authority": str(path.parent / "old-ca.crt")}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "old", "context": {"cluster": "c", "user": "u"}}]}))
    return str(path)


def _refused(cluster: KubeCluster) -> bool:
    try:
        cluster.server_version()
        cluster.list("ResourceSlice")
    except Unauthorized:
        return True
    return False


def test_a_plain_connect_names_the_real_clusters_it_found(inside, control_plane, shell, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(control_plane.kubeconfig))
    context = yaml.safe_load(control_plane.kubeconfig.read_text())["current-context"]
    shown = repr(shell.run("%dra connect"))
    assert shown.startswith("Connected to simulated cluster 'default'")
    assert (f"this pod's service account {inside.namespace}/{ACCOUNT} (API server https://"
            in shown and "%dra connect --in-cluster" in shown), shown
    assert f"the kubeconfig's current context {context!r}" in shown and f"%dra connect --context {context}" in shown


def test_the_in_cluster_target_makes_a_plain_connect_reach_the_cluster(inside, shell, monkeypatch, capsys):
    monkeypatch.setenv(TARGET_ENV, "in-cluster")
    assert f"service account {inside.namespace}/{ACCOUNT}" in repr(shell.run("%dra connect"))
    assert main(["devices"]) == 0
    assert "simulated" not in capsys.readouterr().err
    shell.run("%config DRAMagics.target = 'simulated'")
    assert repr(shell.run("%dra connect")).startswith("Connected to simulated cluster")


def test_without_a_mount_in_cluster_says_what_is_missing(inside, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(MOUNT_DIR_ENV, str(tmp_path / "empty"))
    started = time.monotonic()
    assert main(["--in-cluster", "devices"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"NotInCluster: no service account token at {tmp_path / 'empty' / 'token'}: the pod runs "
                          "without its service account mounted"), err
    assert "automountServiceAccountToken" in err and time.monotonic() - started < 5
    monkeypatch.delenv(HOST_ENV)
    assert main(["--in-cluster", "devices"]) == 2
    assert capsys.readouterr().err.startswith("NotInCluster: not inside a pod: KUBERNETES_SERVICE_HOST not set")
