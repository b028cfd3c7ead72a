"""Bad input to ``why``: each a named DrawbError with a hint, through the magic and the command line."""

from __future__ import annotations

import pytest

from drawb.cli import main
from drawb.cluster.sim.clock import ManualClock
from drawb.cluster.sim.cluster import SimCluster
from tests.unit.explain.conftest import claim, exactly, pod


@pytest.fixture
def magic(shell):
    """%dra on a simulated cluster holding a pod without claims and a claim in another namespace."""
    session = shell.ipython.magics_manager.registry["DRAMagics"].session
    session.close()
    session._cluster = SimCluster(clock=ManualClock())
    session._cluster.apply([
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain", "namespace": "default"},
         "spec": {"containers": [{"name": "c", "image": "ubuntu:22.04"}]}},
        claim("far", exactly("gpu"), ns="gpu-demo"),
    ])
    yield shell
    session.close()


def test_magic_names_each_bad_input(magic, tmp_path):
    not_yaml = tmp_path / "notes.txt"
    not_yaml.write_text("just: [unclosed\n")
    cases = {
        "%dra why nosuchpod": "PodNotFound: no pod 'nosuchpod' in namespace 'default'",
        "%dra why plain": "NoClaims: pod default/plain uses no ResourceClaim",
        "%dra why claim/far": "OtherNamespace: no ResourceClaim 'far' in namespace 'default'; it is in namespace 'gpu-demo'",
        f"%dra why -f {not_yaml}": f"NotAManifest: {not_yaml} is not YAML or JSON (line 2",
        "%dra why pod/": "UsageError: cannot read 'pod/'",
        "%dra why": "UsageError: why needs one POD",
    }
    for line, expected in cases.items():
        err = magic.fails(line)
        assert err.startswith(expected), (line, err)
        assert "Hint:" in err and "Traceback" not in err
    assert "add `-n gpu-demo`" in magic.fails("%dra why claim/far")
    assert "%dra events plain" in magic.fails("%dra why plain")  # the hint names this front end


def test_magic_result_is_the_explanation(magic):
    explanation = magic.run("w = %dra why claim/far -n gpu-demo\nw")
    assert explanation.state == "not-used-by-a-pod" and "<table>" in explanation._repr_html_()


def test_cli_names_each_bad_input(tmp_path, capsys):
    service = tmp_path / "service.yaml"
    service.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: web}\n")
    cases = [
        (["why", "nosuchpod"], "PodNotFound: no pod 'nosuchpod' in namespace 'default'"),
        (["why", "claim/notebook-mig"], "OtherNamespace: no ResourceClaim 'notebook-mig' in namespace 'default'"),
        (["why", "-f", str(service)], f"NotAManifest: {service} is not a Pod or ResourceClaim manifest: it holds Service"),
        (["why", "-f", str(tmp_path / "missing.yaml")], "NotAManifest:"),
    ]
    for argv, expected in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(expected), (argv, err)
        assert "Hint:" in err


def test_cli_explains_a_manifest_file(tmp_path, capsys):
    manifest = tmp_path / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: notebook, namespace: gpu-demo}\nspec: {}\n")
    assert main(["why", "-f", str(manifest)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("why pod gpu-demo/notebook: allocated") and "gpu-5-mig-3g40gb-9-4" in out
