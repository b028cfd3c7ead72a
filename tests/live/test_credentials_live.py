"""Credentials as kubectl handles them, against the real control plane, and each way they fail named.

A real exec plugin (a script that runs the built ``kubectl create token`` for a ServiceAccount bound by
drawb's RBAC manifest and prints an ExecCredential) reaches the cluster as that ServiceAccount; a
missing plugin, one that exits 1, one that prints something else and one that needs a terminal each
give one named error with its fix. So do a CA that did not sign the server's certificate, a
tls-server-name the certificate does not name, a client key that does not match its certificate, a
dead proxy and a port where nothing listens (refused within 1 s). A ``tokenFile`` and a ``proxy-url``
work. No log line of a library reaches the output; every token and key is scanned for.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from drawb.access import rbac
from drawb.cli import main
from drawb.cluster.connect import connect
from drawb.cluster.kube.failures import ConnectionRefused
from drawb.testing.api import path_for
from drawb.testing.connect_proxy import ConnectProxy
from tests import credscan

pytestmark = pytest.mark.live
ACCOUNT = "drawb-exec"
EXEC_V1 = "client.authentication.k8s.io/v1"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def account(control_plane):
    """(namespace, ServiceAccount) bound by drawb's RBAC manifest."""
    home = control_plane.create_namespace("creds")
    control_plane.api().create({"apiVersion": "v1", "kind": "ServiceAccount",
                                "metadata": {"name": ACCOUNT, "namespace": home}})
    manifest = rbac.to_yaml(rbac.manifest(home, rbac.subject(service_account=ACCOUNT, namespace=home)))
    control_plane.kubectl("apply", "-f", "-", input=manifest)
    yield home, ACCOUNT
    for obj in yaml.safe_load_all(manifest):
        if obj["kind"].startswith("Cluster"):
            control_plane.kubectl("delete", obj["kind"].lower(), obj["metadata"]["name"], "--ignore-not-found",
                                  check=False)
    control_plane.api().delete(path_for("Namespace", home))


def _kubeconfig(control_plane, path: Path, user: dict, **cluster) -> str:
    """A kubeconfig for the control plane's API server with ``user`` (and ``cluster`` settings on top)."""
    admin = yaml.safe_load(control_plane.kubeconfig.read_text())
    entry = dict(admin["clusters"][0]["cluster"])
    if not entry.get("certificate-authority", "/").startswith("/"):
        entry["certificate-authority"] = str(control_plane.kubeconfig.parent / entry["certificate-authority"])
    entry.update(cluster)
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "tester",
              "clusters": [{"name": "local", "cluster": entry}], "users": [{"name": "tester", "user": user}],
              "contexts": [{"name": "tester", "context": {"cluster": "local", "user": "tester"}}]}
    path.write_text(json.dumps(config))
    credscan.remember_kubeconfig(path)
    return str(path)


def _admin_user(control_plane) -> dict:
    """The admin kubeconfig's user (client certificate and key), its file paths made absolute."""
    user = dict(yaml.safe_load(control_plane.kubeconfig.read_text())["users"][0]["user"])
    for key in ("client-certificate", "client-key"):
        if key in user and not user[key].startswith("/"):
            user[key] = str(control_plane.kubeconfig.parent / user[key])
    return user


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _exec_user(command: str, **more) -> dict:
    return {"exec": {"apiVersion": EXEC_V1, "command": command, "interactiveMode": "Never", **more}}


@pytest.fixture(scope="module")
def plugin(control_plane, account, tmp_path_factory):
    """(exec user entry, file of the tokens it issued): a plugin that asks the API server for a token."""
    home, name = account
    folder = tmp_path_factory.mktemp("plugin")
    issued = folder / "issued"
    command = _script(folder / "token-plugin", (
        "# a TokenRequest token of a ServiceAccount, printed as an ExecCredential\n"
        "set -e\n"
        'case "$KUBERNETES_EXEC_INFO" in *\'"interactive": false\'*) ;; *) echo "no ExecCredential input" >&2; exit 3;; '
        "esac\n"
        'token=$("$KUBECTL" --kubeconfig "$ADMIN" create token "$ACCOUNT" -n "$NAMESPACE" --duration=1h)\n'
        'printf "%s\\n" "$token" >> "$ISSUED"\n'
        'expires=""\n'
        'if [ -n "$EXPIRES" ]; then expires=$(date -u -d "+$EXPIRES" +%Y-%m-%dT%H:%M:%SZ); fi\n'
        'printf \'{"apiVersion": "%s", "kind": "ExecCredential", "status": {"token": "%s"%s}}\\n\' "$API" "$token" '
        '"${expires:+, \\"expirationTimestamp\\": \\"$expires\\"}"\n'))
    env = {"KUBECTL": str(control_plane.cluster.bin_dir / "kubectl"), "ADMIN": str(control_plane.kubeconfig),
           "ACCOUNT": name, "NAMESPACE": home, "ISSUED": str(issued), "API": EXEC_V1}
    return _exec_user(command, env=[{"name": k, "value": v} for k, v in env.items()]), issued


def _remember_issued(issued: Path) -> list[str]:
    tokens = issued.read_text().split() if issued.exists() else []
    for token in tokens:
        credscan.remember(token, "a token the exec plugin issued")
    return tokens


def _drawb(capsys, kubeconfig: str, *words: str) -> tuple[int, str, str]:
    status = main(["--kubeconfig", kubeconfig, *words])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _library_records(caplog) -> list[str]:
    return [f"{r.name}: {r.getMessage()}" for r in caplog.records
            if r.levelno >= logging.WARNING and not r.name.startswith("drawb")]


def test_an_exec_plugin_reaches_the_cluster_as_its_service_account(control_plane, account, plugin, tmp_path,
                                                                   capsys, caplog):
    home, name = account
    user, issued = plugin
    kubeconfig = _kubeconfig(control_plane, tmp_path / "exec.kubeconfig", user)
    status, out, err = _drawb(capsys, kubeconfig, "-n", home, "devices")
    assert len(_remember_issued(issued)) >= 1  # the plugin ran and asked the API server for a token
    assert status == 0 and "gpu.nvidia.com" in out, err
    # the API server saw the ServiceAccount the plugin's token belongs to
    status, out, err = _drawb(capsys, kubeconfig, "pods", "-n", "kube-system")
    _remember_issued(issued)
    assert status == 2
    assert f'RBAC refused list on pods in namespace "kube-system" for user "system:serviceaccount:{home}:{name}"' in err
    assert _library_records(caplog) == []


def test_an_exec_credential_about_to_expire_is_asked_for_again(control_plane, account, plugin, tmp_path, capsys):
    home, _ = account
    user, issued = plugin
    expiring = {"exec": {**user["exec"], "env": [*user["exec"]["env"], {"name": "EXPIRES", "value": "1 minute"}]}}
    kubeconfig = _kubeconfig(control_plane, tmp_path / "expiring.kubeconfig", expiring)
    before = len(_remember_issued(issued))
    status, out, err = _drawb(capsys, kubeconfig, "-n", home, "classes")
    # the client takes a credential that expires within 5 minutes as expired: the plugin runs again per request
    assert status == 0 and "gpu.nvidia.com" in out, err
    assert len(_remember_issued(issued)) - before >= 2


def _fails_with(capsys, caplog, kubeconfig: str, name: str, message: str, hint: str) -> None:
    status, out, err = _drawb(capsys, kubeconfig, "devices")
    lines = err.strip().splitlines()
    assert (status, out) == (2, ""), err
    assert len(lines) == 2 and lines[0].startswith(f"{name}: "), err  # one named error and its hint, nothing else
    assert message in lines[0] and lines[1].startswith("Hint: ") and hint in lines[1], err
    assert _library_records(caplog) == []


def test_a_missing_exec_plugin_names_the_command_and_the_install_hint(control_plane, tmp_path, capsys, caplog):
    command = str(tmp_path / "gke-gcloud-auth-plugin")
    hint = "Install gke-gcloud-auth-plugin for use with kubectl by following https://cloud.google.com/kubernetes-engine"
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", _exec_user(command, installHint=hint))
    _fails_with(capsys, caplog, kubeconfig, "ExecPluginNotFound",
                f"the exec plugin {command!r} of kubeconfig user 'tester' is not installed at that path", hint)
    bare = _kubeconfig(control_plane, tmp_path / "bare", _exec_user("drawb-no-such-auth-plugin"))
    _fails_with(capsys, caplog, bare, "ExecPluginNotFound", "'drawb-no-such-auth-plugin' of kubeconfig user 'tester' "
                "is not installed on PATH", "install it, or correct users[tester].user.exec.command")


def test_an_exec_plugin_that_exits_1_shows_its_stderr_redacted(control_plane, tmp_path, capsys, caplog):
    secret = "refresh-token-5f1e9c0d7b3a2e4f6a8b"
    credscan.remember(secret, "the failing plugin's refresh token")
    command = _script(tmp_path / "auth", f'echo "error: the session expired (refresh-token: {secret}); run: '
                      'auth login" >&2\nexit 1\n')
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", _exec_user(command))
    _fails_with(capsys, caplog, kubeconfig, "ExecPluginFailed",
                "exited with status 1: error: the session expired (refresh-token: <redacted>); run: auth login",
                "run the same command in a terminal")


@pytest.mark.parametrize("printed, message", [
    ("echo 'logged in as alice'", "printed 19 bytes that are not an ExecCredential (not JSON"),
    ('echo \'{"apiVersion": "v1", "kind": "Status"}\'', "printed JSON that is not an ExecCredential (kind 'Status')"),
    ('echo \'{"apiVersion": "client.authentication.k8s.io/v1beta1", "kind": "ExecCredential", "status": {}}\'',
     "answered with apiVersion 'client.authentication.k8s.io/v1beta1'; the kubeconfig asks for "
     "'client.authentication.k8s.io/v1'"),
    ('echo \'{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": {}}\'',
     "whose status has neither a token nor clientCertificateData with clientKeyData"),
    (":", "printed nothing on stdout, where an ExecCredential was expected"),
])
def test_an_exec_plugin_that_prints_no_exec_credential_is_named(control_plane, tmp_path, capsys, caplog, printed,
                                                                message):
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", _exec_user(_script(tmp_path / "auth", printed + "\n")))
    _fails_with(capsys, caplog, kubeconfig, "ExecCredentialInvalid", message, "")


def test_an_exec_plugin_that_needs_a_terminal_is_refused(control_plane, plugin, tmp_path, capsys, caplog):
    user, issued = plugin
    interactive = {"exec": {**user["exec"], "interactiveMode": "Always"}}
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", interactive)
    before = issued.read_text() if issued.exists() else ""
    _fails_with(capsys, caplog, kubeconfig, "ExecPluginInteractive",
                "needs a terminal (interactiveMode: Always); drawb runs exec plugins without one", "log in once")
    assert (issued.read_text() if issued.exists() else "") == before  # refused before it ran


def test_a_missing_exec_plugin_on_the_command_line_prints_only_drawb_s_error(control_plane, tmp_path):
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", _exec_user("/nonexistent/auth-helper"))
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    done = subprocess.run([sys.executable, "-m", "drawb.cli", "--kubeconfig", kubeconfig, "devices"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "ExecPluginNotFound: the exec plugin '/nonexistent/auth-helper' of kubeconfig user 'tester' is not installed "
        "at that path",
        "Hint: install it, or correct users[tester].user.exec.command in the kubeconfig"]


def _openssl(*args: str, cwd: Path) -> None:
    assert shutil.which("openssl"), "these tests make certificates with the openssl command"
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def test_a_ca_that_did_not_sign_the_server_certificate_is_named(control_plane, tmp_path, capsys, caplog):
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key", "-out", "other-ca.crt",
             "-subj", "/CN=another cluster's CA", "-days", "1", cwd=tmp_path)
    credscan.remember_file(tmp_path / "other-ca.key", "the other CA's key")
    user = _admin_user(control_plane)
    ca = tmp_path / "other-ca.crt"
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", user, **{"certificate-authority": str(ca)})
    _fails_with(capsys, caplog, kubeconfig, "TLSVerifyFailed",
                f"is not signed by the kubeconfig's certificate-authority ({ca})", "get the cluster's CA again")
    renamed = _kubeconfig(control_plane, tmp_path / "renamed", user, **{"tls-server-name": "not-the-apiserver.example"})
    _fails_with(capsys, caplog, renamed, "TLSVerifyFailed", "is not valid for the name not-the-apiserver.example",
                "set tls-server-name")


def test_a_client_key_that_does_not_match_its_certificate_is_named(control_plane, tmp_path, capsys, caplog):
    _openssl("genrsa", "-out", "wrong.key", "2048", cwd=tmp_path)
    credscan.remember_file(tmp_path / "wrong.key", "a client key of no certificate")
    user = {**_admin_user(control_plane), "client-key": str(tmp_path / "wrong.key")}
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", user)
    _fails_with(capsys, caplog, kubeconfig, "TLSFailed", "the client certificate and key of the kubeconfig's user do "
                "not load", "must be a matching PEM pair")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_port_where_nothing_listens_is_refused_within_a_second(control_plane, tmp_path, capsys, caplog):
    server = f"https://127.0.0.1:{_free_port()}"
    kubeconfig = _kubeconfig(control_plane, tmp_path / "k", {"token": "not-used-0123456789"}, server=server)
    started = time.monotonic()
    with pytest.raises(ConnectionRefused) as caught:
        connect(kubeconfig=kubeconfig)
    assert time.monotonic() - started < 1.0
    assert str(caught.value) == f"nothing listens at {server}: the connection was refused"
    _fails_with(capsys, caplog, kubeconfig, "ConnectionRefused", f"nothing listens at {server}",
                "check that the API server runs there")


def test_a_token_file_through_a_proxy_url(control_plane, account, tmp_path, capsys, caplog):
    home, name = account
    token = control_plane.kubectl("create", "token", name, "-n", home, "--duration=1h").stdout.strip()
    credscan.remember(token, "the tokenFile's token")
    (tmp_path / "token").write_text(token)
    proxy = ConnectProxy()
    try:
        kubeconfig = _kubeconfig(control_plane, tmp_path / "k", {"tokenFile": "token"}, **{"proxy-url": proxy.url})
        status, out, err = _drawb(capsys, kubeconfig, "-n", home, "classes")
        assert status == 0 and "gpu.nvidia.com" in out, err
        api_server = yaml.safe_load(control_plane.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        assert proxy.targets and set(proxy.targets) == {api_server.split("://", 1)[1]}
    finally:
        proxy.close()
    dead = f"http://127.0.0.1:{_free_port()}"
    kubeconfig = _kubeconfig(control_plane, tmp_path / "dead", {"tokenFile": "token"}, **{"proxy-url": dead})
    _fails_with(capsys, caplog, kubeconfig, "ProxyFailed", f"the proxy {dead} (the cluster's proxy-url) failed",
                "check the proxy-url")
