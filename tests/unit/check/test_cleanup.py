"""``cleanup`` removes what killed checks left (pod, claim template, the claim made from it) and nothing else.

A killed check is played by applying a check's own objects with the owner annotation of a process that
really ran and exited; a running check by the same objects owned by this process.
"""

from __future__ import annotations

import socket
import subprocess

from drawb.check import build_objects
from drawb.check.manifests import RUN_LABEL
from drawb.cluster.owner import OWNER_ANNOTATION, _start_ticks
from drawb.cli import main
from drawb.cluster.protocol import MANAGED_BY_LABEL


def dead_process() -> str:
    """The owner annotation of a process that ran here and is gone."""
    proc = subprocess.Popen(["true"])
    started = _start_ticks(proc.pid)
    proc.wait()
    return f"{socket.gethostname()}/{proc.pid}/{started}"


def owned_by(objects, owner: str) -> list[dict]:
    for doc in objects.documents:
        for meta in (doc["metadata"], (doc.get("spec") or {}).get("metadata")):
            if meta is not None and OWNER_ANNOTATION in (meta.get("annotations") or {}):
                meta["annotations"][OWNER_ANNOTATION] = owner
    return objects.documents


HOLDING = {"payload": "sample", "command": ["sleep", "infinity"]}  # a check pod that runs on, holding its GPU


def held_devices(shell) -> list[tuple[str, str]]:
    devices = shell.run("%dra devices")
    return sorted((row.device, row.claim) for row in devices.itertuples()
                  if isinstance(row.claim, str) and row.claim.startswith("default/drawb-check-"))


def session_of(shell):
    return shell.ipython.magics_manager.registry["DRAMagics"].session


def test_cleanup_removes_the_leftovers_of_a_killed_check_and_nothing_else(shell):
    cluster = session_of(shell).cluster
    killed = build_objects(cluster, namespace="default", run_id="killed0001", **HOLDING)
    running = build_objects(cluster, namespace="default", run_id="running001", **HOLDING)
    cluster.apply(owned_by(killed, dead_process()))
    cluster.apply(running.documents)  # owned by this process, which runs
    shell.run("%%dra apply\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, namespace: default}\n")
    claims = {c["metadata"]["name"]: c for c in cluster.list("ResourceClaim", "default")
              if (c["metadata"].get("labels") or {}).get(RUN_LABEL) == "killed0001"}
    [claim] = claims.values()  # made from the template, and labelled by it: drawb's
    assert claim["metadata"]["labels"][MANAGED_BY_LABEL] == "drawb"
    held = held_devices(shell)
    assert len(held) == 2  # the killed check's pod runs on, and holds a GPU

    listed = shell.run("%dra cleanup --dry-run")
    assert listed.status == "dry run: 3 object(s) of 1 killed run(s) in namespace default would be removed"
    assert [o.label for o in listed.leftovers] == [
        f"Pod/{killed.pod_name}", f"ResourceClaim/{claim['metadata']['name']}",
        f"ResourceClaimTemplate/{killed.claim_template['metadata']['name']}"]
    assert cluster.get("Pod", killed.pod_name, "default") is not None  # a dry run removes nothing

    removed = shell.run("%dra cleanup")
    assert removed.status.startswith("removed ") and "1 killed run(s)" in removed.status
    left = {(o["kind"], o["metadata"]["name"]) for kind in ("Pod", "ResourceClaim", "ResourceClaimTemplate", "ConfigMap")
            for o in cluster.list(kind, "default")}
    assert not {name for _, name in left if "killed0001" in name}
    assert ("Pod", running.pod_name) in left and ("ConfigMap", "mine") in left  # a running check's, the user's
    assert held_devices(shell) == [d for d in held if "running001" in d[1]]  # the killed check's GPU is free
    assert shell.run("%dra cleanup").status == "no leftovers of killed runs in namespace default"


def test_a_check_says_when_killed_checks_left_objects(shell, capsys):
    cluster = session_of(shell).cluster
    killed = build_objects(cluster, namespace="default", run_id="killed0002", **HOLDING)
    cluster.apply(owned_by(killed, dead_process()))
    session = session_of(shell)
    lines = []
    session.progress = lines.append
    try:
        shell.run("%dra check --json")
    finally:
        session.progress = print
    assert lines[0].startswith(f"leftovers of 1 killed run(s) in default: Pod/{killed.pod_name}, ")
    assert lines[0].endswith("`%dra cleanup -n default` removes them")


def test_cleanup_on_the_command_line(capsys):
    assert main(["cleanup", "-A", "--dry-run"]) == 0
    assert "no leftovers of killed runs in every namespace" in capsys.readouterr().err
    assert main(["cleanup", "-A", "-n", "x"]) == 2


def test_cleanup_removes_the_probe_of_a_killed_doctor_live(shell):
    from drawb.doctor.live import probe_claim, probe_pod

    cluster = session_of(shell).cluster
    objects = [probe_claim("drawb-doctor-live-dead", "default", "dead", False),
               probe_pod("drawb-doctor-live-dead", "default", "dead", claim="drawb-doctor-live-dead")]
    owner = dead_process()
    for obj in objects:
        obj["metadata"]["annotations"][OWNER_ANNOTATION] = owner
    cluster.apply(objects)
    removed = shell.run("%dra cleanup")
    assert sorted(o.label for o in removed.leftovers) == ["Pod/drawb-doctor-live-dead",
                                                          "ResourceClaim/drawb-doctor-live-dead"]
    assert cluster.get("ResourceClaim", "drawb-doctor-live-dead", "default") is None
