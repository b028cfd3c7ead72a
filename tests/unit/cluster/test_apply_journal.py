"""The apply journal on disk (what a rollback after a kill reads) and the simulated cluster's apply under an
interrupt. The real cluster's rollback under real faults: tests/live/test_apply_faults.py."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from drawb.cluster.connect import connect
from drawb.cluster.journal import Journal, Write, left_by_dead_runs, with_run_label
from drawb.cluster.kube.rollback import Rollback, named
from drawb.cluster.owner import this_process

SERVER = "https://127.0.0.1:6443"


def a_claim(name: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}


def dead_owner() -> str:
    """host/pid/start of a process that has ended."""
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{socket.gethostname()}/{proc.stdout.strip()}/1"


def test_a_journal_is_written_before_each_write_and_read_back_without_a_line_cut_short():
    journal = Journal.start(SERVER)
    assert not journal.path.exists()  # nothing written yet: no journal
    previous = {**a_claim("b"), "status": {"x": 1}}
    previous["metadata"] = {**previous["metadata"], "managedFields": [{"manager": "drawb"}]}
    journal.record(Write.of(a_claim("a"), None))
    journal.record(Write.of(a_claim("b"), previous))
    with open(journal.path, "a") as file:
        file.write('{"kind": "ResourceClaim", "na')  # a kill in the middle of a line: that write was never sent
    read = Journal.read(journal.path)
    assert (read.run, read.owner, read.server) == (journal.run, this_process(), SERVER)
    assert [(w.kind, w.namespace, w.name) for w in read.writes] == [("ResourceClaim", "team-a", "a"),
                                                                     ("ResourceClaim", "team-a", "b")]
    assert read.writes[0].previous is None
    assert "status" not in read.writes[1].previous and "managedFields" not in read.writes[1].previous["metadata"]
    journal.close()
    assert not journal.path.exists()


def test_only_journals_of_ended_runs_against_the_same_server_are_left_to_finish():
    running = Journal.start(SERVER)
    running.record(Write.of(a_claim("a"), None))
    ended = Journal(run="ended", owner=dead_owner(), server=SERVER, path=running.path.with_name("ended.jsonl"))
    ended.record(Write.of(a_claim("b"), None))
    elsewhere = Journal(run="other", owner=dead_owner(), server="https://10.0.0.1", path=running.path.with_name("o.jsonl"))
    elsewhere.record(Write.of(a_claim("c"), None))
    assert [j.run for j in left_by_dead_runs(SERVER)] == ["ended"]  # not this process's apply under way
    running.close(keep=True)  # this process's apply is over, its rollback unfinished: the next command finishes it
    assert sorted(j.run for j in left_by_dead_runs(SERVER)) == sorted(["ended", running.run])
    for journal in (ended, elsewhere, running):
        journal.close()


def test_an_unwritable_state_folder_stops_the_apply_before_the_write(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker / "state"))
    journal = Journal.start(SERVER)
    with pytest.raises(Exception, match="cannot write the apply journal") as raised:
        journal.record(Write.of(a_claim("a"), None))
    assert type(raised.value).__name__ == "JournalUnwritable" and "$XDG_STATE_HOME" in raised.value.hint
    assert journal.writes == []
    journal.close()


def test_the_run_label_is_on_the_object_not_on_the_claims_a_template_makes():
    template = {"kind": "ResourceClaimTemplate", "metadata": {"name": "t", "labels": {"a": "b"}},
                "spec": {"metadata": {"labels": {"c": "d"}}, "spec": {}}}
    labelled = with_run_label(template, "run-1")
    assert labelled["metadata"]["labels"] == {"a": "b", "drawb/apply-run": "run-1"}
    assert labelled["spec"]["metadata"]["labels"] == {"c": "d"} and template["metadata"]["labels"] == {"a": "b"}


def test_a_rollback_names_every_object_by_kind_and_namespace():
    journal = Journal("r1", "vm/12/34", SERVER, None, [Write("ResourceClaim", "team-a", "a"), Write("Namespace", None, "n")])
    failure = "the API server did not answer: no answer within the read timeout of 5 s"
    assert named(journal.writes) == "ResourceClaim in team-a: a; Namespace: n"
    partly = Rollback(journal, removed=journal.writes[:1], remaining=journal.writes[1:], failure=failure)
    assert partly.sentence() == (
        f"rolled back apply run r1: removed 1 object(s) it created: ResourceClaim in team-a: a; could not finish "
        f"({failure}): 1 object(s) may remain: Namespace: n; the next {{prog}} command against this cluster removes "
        "them, or `{prog} cleanup`")
    none = Rollback(journal, remaining=journal.writes, failure=failure)
    assert none.sentence().startswith(f"could not roll back apply run r1 ({failure}): 2 object(s) may remain: "
                                      "ResourceClaim in team-a: a; Namespace: n; the next {prog} command")
    assert none.finished_line().startswith("could not finish the rollback of apply run r1 (pid 12 on vm, cut short "
                                           f"before it could roll back) ({failure}): 2 object(s) may remain")
    assert Rollback(journal, removed=journal.writes).finished_line() == (
        "finished the rollback of apply run r1 (pid 12 on vm, cut short before it could roll back): removed 2 "
        "object(s) it created: ResourceClaim in team-a: a; Namespace: n")
    assert Rollback(Journal("r2", "", SERVER, None)).sentence() == "rolled back apply run r2: nothing was written"


def test_an_interrupt_while_the_simulated_cluster_stores_puts_back_what_was_there():
    cluster = connect(scenario="default")
    cluster.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}, a_claim("a")])
    before = {(o["metadata"]["name"], o["metadata"]["resourceVersion"]) for o in cluster.list("ResourceClaim", "team-a")}

    def interrupt(step: str, done: int, total: int) -> None:
        if step == "applying" and done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as raised:
        cluster.apply([a_claim("a"), a_claim("b"), a_claim("c")], progress=interrupt)
    assert raised.value.__notes__ == [f"rolled back: the 2 object(s) written to the {cluster.description} are as they "
                                      "were before"]
    assert {o["metadata"]["name"] for o in cluster.list("ResourceClaim", "team-a")} == {"a"}
    assert len(before) == 1
