"""Credentials never reach an error, a repr, a log record or a front end's output.

The cluster here is a real HTTP server on loopback that does what a careless proxy or server can do:
answer 401 with the request's own Authorization header in its message.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from drawb.redact import REDACTED, redact, remember
from drawb.cli import main
from drawb.cluster.kube import KubeCluster
from drawb.cluster.kube.failures import ExecPluginFailed
from drawb.cluster.protocol import ClusterError, NotConnected
from drawb.errors import DrawbError
from tests import credscan

TOKEN = "kubeconfig-token-0c1d2e3f4a5b6c7d8e9f"
EXEC_TOKEN = "exec-plugin-token-9a8b7c6d5e4f3a2b1c0d"
PASSWORD = "hunter2-basic-password"


class _EchoAuth(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 401,
                           "reason": "Unauthorized",
                           "message": f"Unauthorized: rejected Authorization: {self.headers.get('Authorization')}"})
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def echo_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoAuth)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _kubeconfig(tmp_path, server: str, user: dict, name: str = "kubeconfig.yaml", **cluster) -> str:
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "c", "cluster": {"server": server, **cluster}}],
              "users": [{"name": "u", "user": user}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / name
    path.write_text(json.dumps(config))
    credscan.remember_kubeconfig(path)  # and the session's scan checks every test's output for them
    return str(path)


def _exec_plugin(tmp_path, token: str, fail: bool = False) -> dict:
    script = tmp_path / "plugin.py"
    if fail:
        script.write_text(f"import sys\nprint('login failed; cached token: {token}', file=sys.stderr)\nsys.exit(1)\n")
    else:
        script.write_text("import json\nprint(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
                          f"'kind': 'ExecCredential', 'status': {{'token': '{token}'}}}}))\n")
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "interactiveMode": "Never"}}


def _everything_shown(error: DrawbError) -> str:
    return "\n".join([str(error), repr(error), error.render("drawb"), error.render("%dra"), str(error.args),
                      getattr(error, "message", "")])


def test_a_server_echoing_the_bearer_token_never_shows_it(tmp_path, echo_server, caplog):
    caplog.set_level(logging.DEBUG)
    cluster = KubeCluster(kubeconfig=_kubeconfig(tmp_path, echo_server, {"token": TOKEN}))
    with pytest.raises(ClusterError) as caught:
        cluster.server_version()
    shown = _everything_shown(caught.value)
    assert "rejected Authorization" in shown and REDACTED in shown
    assert TOKEN not in shown and TOKEN not in caplog.text and TOKEN not in repr(cluster.__dict__)


def test_an_exec_plugin_token_never_shows(tmp_path, echo_server, caplog):
    caplog.set_level(logging.DEBUG)
    cluster = KubeCluster(kubeconfig=_kubeconfig(tmp_path, echo_server, _exec_plugin(tmp_path, EXEC_TOKEN)))
    with pytest.raises(ClusterError) as caught:
        cluster.server_version()
    assert EXEC_TOKEN not in _everything_shown(caught.value) and EXEC_TOKEN not in caplog.text


def test_a_failing_exec_plugins_output_never_shows(tmp_path, echo_server, caplog):
    caplog.set_level(logging.DEBUG)
    jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06YWxpY2UifQ.c2lnbmF0dXJlLXBsYW50ZWQ"
    credscan.remember(jwt, "the failing exec plugin's token")
    with pytest.raises(ExecPluginFailed) as caught:
        KubeCluster(kubeconfig=_kubeconfig(tmp_path, echo_server, _exec_plugin(tmp_path, jwt, fail=True)))
    shown = _everything_shown(caught.value)
    assert "exited with status 1: login failed; cached token: <redacted>" in shown  # its stderr, redacted
    assert jwt not in shown and jwt not in caplog.text


def test_basic_auth_password_never_shows(tmp_path, echo_server):
    cluster = KubeCluster(kubeconfig=_kubeconfig(tmp_path, echo_server, {"username": "bob", "password": PASSWORD}))
    with pytest.raises(ClusterError) as caught:
        cluster.server_version()
    shown = _everything_shown(caught.value)
    assert "rejected Authorization" in shown and PASSWORD not in shown and "Ym9iOmh1bnRlcjI" not in shown


def test_a_proxy_password_in_a_connection_error_never_shows(tmp_path):
    config = _kubeconfig(tmp_path, "https://127.0.0.1:9", {"token": TOKEN},
                         **{"proxy-url": f"http://proxyuser:{PASSWORD}@127.0.0.1:9", "insecure-skip-tls-verify": True})
    cluster = KubeCluster(kubeconfig=config)
    with pytest.raises(NotConnected) as caught:
        cluster.server_version()
    assert PASSWORD not in _everything_shown(caught.value)


def test_both_front_ends_show_the_refusal_without_the_token(tmp_path, echo_server, capsys, shell):
    config = _kubeconfig(tmp_path, echo_server, {"token": TOKEN})
    assert main(["--kubeconfig", config, "devices"]) == 2
    captured = capsys.readouterr()
    assert "rejected Authorization" in captured.err and "Traceback" not in captured.err
    assert TOKEN not in captured.out + captured.err
    shown = shell.fails(f"%dra connect --kubeconfig {config}")
    assert "rejected Authorization" in shown and TOKEN not in shown


def test_client_key_data_is_redacted_in_every_form():
    key = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
    import base64

    remember(base64.b64encode(key.encode()).decode())
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" not in redact(f"oops: {key[28:90]}")
    assert redact(key).strip() == REDACTED
    assert str(DrawbError(f"bad key {key}")).strip() == f"bad key {REDACTED}"


@pytest.mark.parametrize("text", [
    "Authorization: Bearer abcdefghijklmnop", "curl -H 'authorization: Basic Ym9iOnNlY3JldA=='",
    "https://bob:s3cretpass@proxy.example:3128/", "  token: abcdefgh12345678", '{"password": "p4ssw0rd-xyz"}',
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl",
])
def test_credential_shapes_are_redacted(text):
    cleaned = redact(text)
    assert REDACTED in cleaned and not credscan.find(cleaned)


def test_ordinary_text_is_left_alone():
    text = 'the token of a watch; device.attributes["gpu.nvidia.com"].productName == "H200"; tokens: 3'
    assert redact(text) == text


def test_token_fields_in_a_tools_message_are_redacted_up_to_their_punctuation():
    shown = redact("invalid_grant (refresh_token: 1//0gXyZabcdefghijklmnop); run: login; [client_secret=abcdefgh123]")
    assert shown == "invalid_grant (refresh_token: <redacted>); run: login; [client_secret=<redacted>]"
