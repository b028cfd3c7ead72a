"""Every command of ``drawb --help``, run as the real command line (a subprocess) with ``-n`` by a
ServiceAccount bound to exactly the Role and ClusterRole ``drawb rbac`` prints, on the real control plane.

Each one succeeds within those rights: namespaced objects are read in the namespace only, cluster-scoped
ones through the ClusterRole; where a view would need more (pods of every namespace for a snapshot),
the command says in one line what it could not see. Nothing prints an RBAC refusal or a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from drawb.testing.api import path_for
from drawb.testing.waiting import wait_for
from tests.live.accounts import Withheld, service_account, token_kubeconfig
from tests.live.claims import claim_template

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
ACCOUNT = "drawb-everyday"
LEGACY = DATA / "migrate" / "01-deployment-single-gpu.yaml"  # a Deployment asking for nvidia.com/gpu
REFUSALS = ("RbacRefused", "RightsMissing", "Traceback", "Forbidden")

TEMPLATES = yaml.safe_dump_all([claim_template("one-gpu"), claim_template("twelve-gpus", count=12)], sort_keys=False)

BIG_POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big-pod"},
           "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "twelve-gpus"}],
                    "containers": [{"name": "main", "image": "ubuntu:24.04", "command": ["sleep", "infinity"],
                                    "resources": {"claims": [{"name": "gpus"}]}}],
                    "tolerations": [{"operator": "Exists"}]}}

APPLIED = yaml.safe_dump(claim_template("applied-by-drawb"), sort_keys=False)


class Home(Withheld):
    """(namespace, kubeconfig, folder); its repr shows the namespace alone."""


@pytest.fixture(scope="module")
def home(control_plane, tmp_path_factory):
    """A namespace with a ServiceAccount bound by ``drawb rbac``'s whole manifest (nothing else), a claim
    template, and a pod too big for any node (pending, its claim made from a template)."""
    api = control_plane.api()
    namespace = control_plane.create_namespace("nsread")
    folder = tmp_path_factory.mktemp("nsread")
    service_account(control_plane, namespace, ACCOUNT)
    printed = subprocess.run([sys.executable, "-m", "drawb.cli", "rbac", "-n", namespace, "--service-account",
                              f"{namespace}:{ACCOUNT}"], capture_output=True, text=True, env=_env(), timeout=120)
    assert printed.returncode == 0, printed.stderr
    manifest = printed.stdout
    control_plane.kubectl("apply", "-f", "-", input=manifest)
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", input=TEMPLATES)
    control_plane.kubectl("apply", "-n", namespace, "-f", str(LEGACY))
    api.create({**BIG_POD, "metadata": {"name": "big-pod", "namespace": namespace}})
    wait_for(lambda: api.request("GET", path_for("ResourceClaim", None, namespace))["items"],
             what="the claim of big-pod", timeout=120)
    path, _ = token_kubeconfig(control_plane, namespace, ACCOUNT, folder / "everyday.kubeconfig", context="everyday")
    (folder / "applied.yaml").write_text(APPLIED)
    yield Home(namespace, str(path), folder)
    for obj in yaml.safe_load_all(manifest):
        if obj and obj["kind"] in ("ClusterRoleBinding",):
            control_plane.kubectl("delete", "clusterrolebinding", obj["metadata"]["name"], "--ignore-not-found",
                                  check=False)
    api.delete(path_for("Namespace", namespace))


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def drawb(home: Home, *words: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """``drawb --kubeconfig KUBECONFIG -n NAMESPACE WORDS...`` as a subprocess, from the worktree's sources."""
    return subprocess.run([sys.executable, "-m", "drawb.cli", "--kubeconfig", home[1], "-n", home[0], *words],
                          capture_output=True, text=True, env=_env(), timeout=timeout, cwd=home[2])


def _clean(done: subprocess.CompletedProcess, words, statuses=(0,)) -> None:
    assert done.returncode in statuses, (words, done.returncode, done.stderr[-3000:])
    refused = [w for w in REFUSALS if w in done.stderr]
    assert not refused, (words, done.stderr[-3000:])


READS = [
    ("connect",), ("devices",), ("devices", "--wide"), ("slices",), ("classes",), ("attrs",), ("nodes",),
    ("claims",), ("claims", "-n", "{ns}"), ("pods",), ("pods", "--all"), ("events",), ("events", "pod/big-pod"),
    ("select", 'device.driver == "gpu.nvidia.com"'), ("map", "--out", "map.svg"), ("templates",), ("scenarios",),
    ("versions",), ("help",), ("rbac", "-n", "{ns}"), ("validate", "applied.yaml"),
    ("convert", str(DATA / "convert" / "v1beta1-claims.yaml")), ("local", "--from", str(DATA / "nvml" / "h200-mig-constructed.json")),
    ("preview", "template/one-gpu"), ("preview", "one-gpu"), ("preview", "-f", "applied.yaml"),
    ("capacity", "template/one-gpu"), ("capacity", "one-gpu"), ("render", "single-gpu", "--preview"),
    ("render", "single-gpu", "--dry-run"), ("apply", "--dry-run", "-f", "applied.yaml"),
    ("migrate", str(DATA / "migrate" / "08-pod-two-containers.yaml"), "--dry-run"),
    ("doctor",), ("snapshot", "save", "snapshot.json"), ("cleanup", "--dry-run"),
    ("devices", "--watch", "--for", "2"), ("claims", "--watch", "--for", "2"), ("pods", "--watch", "--for", "2"),
    ("taints",), ("taint", "--driver", "gpu.nvidia.com", "--pool", "dgx-h100-02", "--effect", "NoSchedule"),
    ("upgrade-check", "--to", "1.35"), ("pools",), ("state",),
]
# exit 1 is a finding, not a failure: the pending pod fits nowhere, doctor may FAIL a check of this cluster
FINDINGS = {("preview", "big-pod"), ("capacity", "big-pod"), ("doctor",), ("why", "big-pod")}


@pytest.mark.parametrize("words", READS, ids=" ".join)
def test_each_read_works_with_drawbs_role_in_the_namespace(home, words):
    words = tuple(w.format(ns=home[0]) for w in words)
    done = drawb(home, *words)
    _clean(done, words, (0, 1) if words in FINDINGS else (0,))


def test_why_and_preview_explain_the_pending_pod_in_the_namespace(home):
    done = drawb(home, "why", "big-pod")
    _clean(done, "why big-pod", (0, 1))
    assert f"pod {home[0]}/big-pod" in done.stdout and "12" in done.stdout, done.stdout
    claim = next(line.split()[1] for line in drawb(home, "claims").stdout.splitlines()[1:] if "big-pod" in line)
    _clean(drawb(home, "why", f"claim/{claim}"), "why claim", (0, 1))
    for command in ("preview", "capacity"):
        done = drawb(home, command, "big-pod", "--json")
        _clean(done, command, (0, 1))
        assert json.loads(done.stdout)["target"] == "pod/big-pod", done.stdout


def test_a_check_its_logs_and_the_write_commands_work_in_the_namespace(home, control_plane):
    done = drawb(home, "check", "single-gpu", "--timeout", "120", "--keep", "--json")
    _clean(done, "check")
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "PASS", verdict
    pod = verdict["pod"]
    done = drawb(home, "logs", pod)
    _clean(done, "logs")
    assert "GPU" in done.stdout, done.stdout
    _clean(drawb(home, "delete", "pod", pod), "delete pod")
    _clean(drawb(home, "cleanup"), "cleanup")
    _clean(drawb(home, "apply", "-f", "applied.yaml"), "apply")
    _clean(drawb(home, "delete", "resourceclaimtemplate", "applied-by-drawb"), "delete template")
    _clean(drawb(home, "doctor", "--live", "--timeout", "120"), "doctor --live", (0, 1))


def test_migrate_reads_the_namespaces_workloads_and_names_the_rule_its_apply_would_need(home):
    done = drawb(home, "migrate", "--cluster")
    _clean(done, "migrate --cluster")
    assert f"cluster:{home[0]}/Deployment/triton" in done.stdout, done.stdout
    # rewriting a Deployment changes it: drawb's Role does not grant that, and the error gives the exact rule
    done = drawb(home, "migrate", str(LEGACY), "--dry-run")
    user = f"system:serviceaccount:{home[0]}:{ACCOUNT}"
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert (f'RightsMissing: drawb migrate needs rights RBAC does not give user "{user}": get on deployments.apps, '
            f'create on deployments.apps, patch on deployments.apps in namespace "{home[0]}"; nothing was written\n'
            "Hint: drawb's RBAC manifest does not grant them: ask a cluster admin to add the rule {apiGroups: "
            '["apps"], resources: ["deployments"], verbs: ["get", "create", "patch"]} to a Role in namespace '
            f'"{home[0]}", bound to user "{user}"') in done.stderr, done.stderr


def test_every_command_line_subcommand_is_run_above():
    """A subcommand added to ``drawb`` without a run here fails this test (the notebook-only ones have no
    command line to run)."""
    from drawb.commands.registry import load_commands

    run = {words[0] for words in READS} | {"why", "check", "logs", "delete", "cleanup", "apply", "migrate", "doctor"}
    assert set(load_commands("drawb")) - run == set()


def test_preview_of_a_device_plugin_pod_says_which_pods_it_could_not_count(home, control_plane):
    """A pod asking for nvidia.com/gpu shares each node with the pods bound there; those of other namespaces are
    not readable with drawb's Role, and the answer says so instead of counting them as absent in silence."""
    pods = wait_for(lambda: [name for name in control_plane.kubectl("get", "pods", "-n", home[0], "-o", "name")
                             .stdout.split() if "triton" in name], what="a pod of the triton Deployment", timeout=120)
    done = drawb(home, "preview", pods[0].split("/")[1], "--json")
    _clean(done, "preview of a device plugin pod", (0, 1))
    assert (f"pods of namespace {home[0]} only were read (list on pods at the cluster scope was refused): extended "
            "resources that pods of other namespaces use on each node are not counted") in json.loads(done.stdout)[
        "summary"], done.stdout
