"""An HTTP 401 names the kubeconfig user and context whose credential failed, and how to refresh it.

The server is a real HTTP server on loopback answering every request as an API server answers a
credential it does not accept.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.context import read_context
from drawb.cluster.protocol import Unauthorized
from tests import credscan

TOKEN = "expired-token-5e6f7a8b9c0d1e2f"
DRAWB = Path(sys.executable).with_name("drawb")


class _Refuses(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                           "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def kubeconfig(tmp_path: Path, server: str, user: dict, namespace: str | None = None) -> Path:
    context = {"cluster": "lab", "user": "alice", **({"namespace": namespace} if namespace else {})}
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "other",
              "clusters": [{"name": "lab", "cluster": {"server": server}}],
              "users": [{"name": "alice", "user": user}, {"name": "bob", "user": {"token": "bob-token-1a2b3c4d"}}],
              "contexts": [{"name": "other", "context": {"cluster": "lab", "user": "bob"}},
                           {"name": "lab-admin", "context": context}]}
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(config))
    credscan.remember_kubeconfig(path)
    return path


def test_a_refused_token_names_the_user_and_context_and_how_to_refresh_it(tmp_path, server):
    path = kubeconfig(tmp_path, server, {"token": TOKEN})
    with pytest.raises(Unauthorized) as caught:
        KubeCluster(kubeconfig=str(path), context="lab-admin").server_version()
    shown = caught.value.render("drawb")
    assert shown.startswith(f"Unauthorized: the API server at {server} refused the credentials of user 'alice' of "
                            f"context 'lab-admin' (kubeconfig {path}): Unauthorized (HTTP 401)\nHint: the token of "
                            "user 'alice' has expired or was revoked"), shown
    assert "kubectl config set-credentials alice --token=NEW_TOKEN" in shown
    assert TOKEN not in shown


def test_an_exec_plugin_is_named_as_what_to_sign_in_with(tmp_path, server):
    script = tmp_path / "sso-token"
    script.write_text("import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
                      f"'kind': 'ExecCredential', 'status': {{'token': '{TOKEN}'}}}}))\n")
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}
    path = kubeconfig(tmp_path, server, user)
    with pytest.raises(Unauthorized) as caught:
        KubeCluster(kubeconfig=str(path), context="lab-admin").server_version()
    assert caught.value.hint.startswith(f"the exec plugin `{sys.executable}` supplies the token, so sign in again")


def test_the_command_line_prints_the_named_error(tmp_path, server):
    path = kubeconfig(tmp_path, server, {"token": TOKEN})
    out = subprocess.run([str(DRAWB), "--kubeconfig", str(path), "devices"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    first, hint = out.stderr.splitlines()[:2]
    assert first.startswith("Unauthorized: ") and "user 'bob' of context 'other'" in first  # the current context
    assert hint == ("Hint: the token of user 'bob' has expired or was revoked: get a new one (for a ServiceAccount: "
                    "`kubectl create token NAME -n NAMESPACE`) and store it with `kubectl config set-credentials bob "
                    "--token=NEW_TOKEN`; `kubectl --context other auth whoami` shows whether the server accepts it")


@pytest.mark.parametrize(("user", "credential"), [
    ({"client-certificate-data": "Zm9v", "client-key-data": "YmFy"}, "client-certificate"),
    ({"client-certificate": "/etc/cert.pem", "client-key": "/etc/key.pem"}, "client-certificate"),
    ({"tokenFile": "/var/run/token"}, "tokenFile"),
    ({"auth-provider": {"name": "oidc", "config": {}}}, "auth-provider"),
    ({"username": "admin", "password": "secret"}, "basic"),
    ({}, "none"),
])
def test_the_kind_of_credential_is_read_from_the_user(tmp_path, user, credential):
    context = read_context(str(kubeconfig(tmp_path, "https://127.0.0.1:1", user, namespace="team-a")), "lab-admin")
    assert (context.credential, context.user, context.namespace) == (credential, "alice", "team-a")
    hint = context.refresh_hint()
    assert "secret" not in hint and "Zm9v" not in hint and "<redacted>" not in Unauthorized("x", hint=hint).hint


def test_kubeconfig_files_merge_as_kubectl_merges_them(tmp_path, monkeypatch):
    first = tmp_path / "first"
    first.mkdir()
    second = kubeconfig(tmp_path, "https://127.0.0.1:1", {"token": TOKEN}, namespace="team-a")
    (first / "config").write_text(json.dumps({"apiVersion": "v1", "kind": "Config", "current-context": "lab-admin",
                                              "contexts": [{"name": "lab-admin",
                                                            "context": {"cluster": "lab", "user": "bob"}}]}))
    monkeypatch.setenv("KUBECONFIG", f"{first / 'config'}:{second}")
    context = read_context()
    assert (context.name, context.user, context.namespace) == ("lab-admin", "bob", None)  # the first file's wins
    assert read_context(context="missing") is None
