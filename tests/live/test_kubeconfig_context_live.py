"""The kubeconfig context on the real API server: its namespace is where drawb works when given none (as for
kubectl), and its user is named when the server refuses the credential."""

from __future__ import annotations

import json

import pytest
import yaml

from drawb.cli import main
from drawb.session import Session
from drawb.testing.api import path_for

pytestmark = pytest.mark.live

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: context-claim
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
"""


@pytest.fixture
def context_kubeconfig(control_plane, namespace, tmp_path):
    """The admin kubeconfig whose context names ``namespace``."""
    config = yaml.safe_load(control_plane.kubeconfig.read_text())
    for entry in config["clusters"]:  # relative paths made absolute: the copy lives elsewhere
        cluster = entry["cluster"]
        for key in ("certificate-authority",):
            if key in cluster and not cluster[key].startswith("/"):
                cluster[key] = str(control_plane.kubeconfig.parent / cluster[key])
    for entry in config["users"]:
        for key in ("client-certificate", "client-key"):
            if key in entry["user"] and not entry["user"][key].startswith("/"):
                entry["user"][key] = str(control_plane.kubeconfig.parent / entry["user"][key])
    current = config.get("current-context") or config["contexts"][0]["name"]
    for entry in config["contexts"]:
        if entry["name"] == current:
            entry["context"]["namespace"] = namespace
    path = tmp_path / "context-namespace.kubeconfig"
    path.write_text(json.dumps(config))
    return path


def test_apply_and_reads_use_the_contexts_namespace(control_plane, namespace, context_kubeconfig, tmp_path, capsys):
    manifest = tmp_path / "claim.yaml"
    manifest.write_text(CLAIM)
    assert main(["--kubeconfig", str(context_kubeconfig), "apply", str(manifest)]) == 0
    capsys.readouterr()
    claim = control_plane.api().get_or_none(path_for("ResourceClaim", "context-claim", namespace))
    assert claim is not None  # in the context's namespace, not in default
    assert control_plane.api().get_or_none(path_for("ResourceClaim", "context-claim", "default")) is None

    assert main(["--kubeconfig", str(context_kubeconfig), "claims", "-o", "yaml"]) == 0
    listed = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    assert {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in listed} == {(namespace, "context-claim")}

    assert main(["--kubeconfig", str(context_kubeconfig), "delete", "resourceclaim", "context-claim"]) == 0
    assert control_plane.api().get_or_none(path_for("ResourceClaim", "context-claim", namespace)) is None


def test_a_namespace_the_user_sets_wins_and_another_cluster_gives_the_contexts_back(namespace, context_kubeconfig):
    session = Session(kubeconfig=str(context_kubeconfig))
    session.settle_namespace()  # read from the kubeconfig, before connecting
    assert session.namespace == namespace and session.connected is None
    session.connect(simulated=True)
    assert session.namespace == "default"  # the simulated cluster has no context
    session.close()
    chosen = Session(kubeconfig=str(context_kubeconfig), namespace="team-b")
    chosen.settle_namespace()
    assert chosen.namespace == "team-b"


def test_a_refused_token_names_the_user_and_context(control_plane, context_kubeconfig, capsys):
    """The real API server refuses a token it never issued: the error names the kubeconfig user and context
    (never the token) and how to get a new one."""
    config = json.loads(context_kubeconfig.read_text())
    token = "not-a-token-the-server-issued-7d1e"
    config["users"] = [{"name": entry["name"], "user": {"token": token}} for entry in config["users"]]
    context_kubeconfig.write_text(json.dumps(config))
    context = next(c for c in config["contexts"] if c["name"] == (config.get("current-context")
                                                                    or config["contexts"][0]["name"]))
    assert main(["--kubeconfig", str(context_kubeconfig), "devices"]) == 2
    err = capsys.readouterr().err
    first, hint = err.splitlines()[:2]
    assert first.startswith("Unauthorized: the API server at https://127.0.0.1:") and "(HTTP 401)" in first, err
    assert f"user '{context['context']['user']}' of context '{context['name']}'" in first
    assert hint.startswith(f"Hint: the token of user '{context['context']['user']}' has expired or was revoked")
    assert token not in err
