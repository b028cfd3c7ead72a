"""drawb's CEL compile check against the real API server: same accept/reject on a corpus of selectors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from drawb.cel import CELCompileError, compile_selector
from drawb.testing.api import ApiError, path_for

pytestmark = [pytest.mark.live, pytest.mark.every_version]

CORPUS = yaml.safe_load(
    (Path(__file__).resolve().parents[1] / "unit" / "cel" / "data" / "differential_corpus.yaml").read_text()
)


def _claim(name: str, namespace: str, expression: str) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"devices": {"requests": [{
            "name": "gpu",
            "exactly": {"deviceClassName": "gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]},
        }]}},
    }


def _server_verdict(api, namespace: str, index: int, expression: str) -> str | None:
    """None when the API server accepts the claim (dry run), else its error message."""
    try:
        api.create(_claim(f"cel-{index}", namespace, expression), dryRun="All")
    except ApiError as err:
        if err.status != 422:
            raise
        return err.message
    return None


def _drawb_verdict(expression: str, version: str) -> str | None:
    try:
        compile_selector(expression, kubernetes_version=version)
    except CELCompileError as err:
        return str(err)
    return None


def test_compile_agrees_with_api_server(control_plane, namespace):
    api = control_plane.api()
    version = api.get("/version")["gitVersion"]  # drawb checks with the rules of the server it is compared with
    assert api.get(path_for("DeviceClass", "gpu.nvidia.com"))
    disagreements = []
    messages = []
    for index, expression in enumerate(CORPUS["expressions"]):
        server = _server_verdict(api, namespace, index, expression)
        ours = _drawb_verdict(expression, version)
        if (server is None) != (ours is None):
            disagreements.append((expression[:200], server, ours))
        elif server is not None and ours not in server and expression not in CORPUS["message_gaps"]:
            messages.append((expression[:200], server, ours))
    assert len(CORPUS["expressions"]) >= 200
    assert not disagreements, "\n\n".join(f"{e!r}\n  server: {s}\n  drawb:  {o}" for e, s, o in disagreements)
    assert not messages, "\n\n".join(f"{e!r}\n  server: {s}\n  drawb:  {o}" for e, s, o in messages)
