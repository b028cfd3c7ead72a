"""The rewrite of the migration corpus, checked against rules rather than stored output:
untouched lines stay byte for byte, every legacy request becomes a claim of the same count and kind."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml

from drawb.api.workloads import pod_specs
from drawb.migrate import migrate, read_paths, rewrite_sources
from drawb.migrate.claims import effective_devices
from drawb.migrate.legacy import device_for
from drawb.migrate.sources import Source
from tests.conftest import DATA

CORPUS = DATA / "migrate"
FILES = sorted(CORPUS.glob("*.yaml")) + [DATA / "custom-kinds" / "legacy-ml-jobs.yaml"]  # and custom kinds
LEGACY = re.compile(r"nvidia\.com/(gpu|mig-[\w.+-]+)[\"']?\s*:")
EMPTIED = re.compile(r"^\s*(limits|requests):\s*(#.*)?$")


def _one(path: Path):
    [result] = rewrite_sources([Source(str(path), path.read_text(), path, path.name)])
    return result


def test_the_corpus_has_every_shape_the_issue_names():
    assert len(FILES) >= 20
    docs = [d for f in FILES for d in yaml.safe_load_all(f.read_text()) if d]
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod"} <= kinds
    texts = [f.read_text() for f in FILES]
    assert any("initContainers" in t for t in texts) and any("restartPolicy: Always" in t for t in texts)
    assert any("nvidia.com/mig-" in t for t in texts) and any(t.count("\n---") >= 2 for t in texts)
    assert any(t.lstrip().startswith("kind:") for t in texts)  # unusual key order


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_only_legacy_lines_go_and_the_others_stay_byte_for_byte(path):
    result = _one(path)
    assert result.changed
    old, new = path.read_text().splitlines(keepends=True), result.new_text.splitlines(keepends=True)
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            for line in old[i1:i2]:
                assert LEGACY.search(line) or EMPTIED.match(line), f"untouched line changed: {line!r}"
    kept = [line for line in old if not LEGACY.search(line) and not EMPTIED.match(line)]
    assert kept == [line for line in kept if line in new]
    assert _subsequence(kept, new)


NEW_LINE = re.compile(r"^\s*(claims:|resourceClaims:|(-\s+)?name: [a-z0-9-]+|resourceClaimTemplateName: [a-z0-9-]+)\r?\n$")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_workloads_get_the_claim_lines_alone(path):
    """Beside the templates in front, every line the rewrite adds to a workload is a claim line, and every
    line it changes is a flow collection that held a legacy request."""
    result = _one(path)
    for document in result.documents:
        if not document.changed:
            continue
        template_lines = sum(len(t.splitlines()) for t in document.new_text.split("---\n")[:-1]) + len(document.templates)
        old = document.text.splitlines(keepends=True)
        new = document.new_text.splitlines(keepends=True)
        new = new[:1] + new[1 + template_lines:] if old and old[0].startswith("---") else new[template_lines:]
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            if tag == "insert":
                assert all(NEW_LINE.match(line) for line in new[j1:j2]), new[j1:j2]
            elif tag == "replace":
                assert all(LEGACY.search(line) or EMPTIED.match(line) for line in old[i1:i2]), old[i1:i2]
                assert all(NEW_LINE.match(line) or "claims: [" in line for line in new[j1:j2]), new[j1:j2]


def test_real_world_shapes_keep_every_other_byte():
    """A leading blank line, mixed indentation, comments between and after the limits, CRLF line ends, no
    line break at the end: the rewritten text is the original with the legacy lines out and the claims in."""
    text = ("\n# trainer\napiVersion: v1\nkind: Pod\nmetadata:\n    name: p   # indented 4\nspec:\n  containers:\n"
            "    -   name: a\n        image: x\n        resources:\n          limits:\n            # the GPU\n"
            "            nvidia.com/gpu: 1  # one\n            cpu: 1\n\n          # after the limits\n"
            "  restartPolicy: Never")
    [result] = rewrite_sources([Source("p.yaml", text)])
    body = result.new_text.split("---\n")[-1]
    assert body == ("\n# trainer\napiVersion: v1\nkind: Pod\nmetadata:\n    name: p   # indented 4\nspec:\n"
                    "  containers:\n    -   name: a\n        image: x\n        resources:\n          limits:\n"
                    "            # the GPU\n            cpu: 1\n          claims:\n            -   name: gpu\n\n"
                    "          # after the limits\n  restartPolicy: Never\n  resourceClaims:\n    -   name: gpu\n"
                    "        resourceClaimTemplateName: p-gpu")
    [crlf] = rewrite_sources([Source("p.yaml", text.replace("\n", "\r\n") + "\r\n")])
    assert crlf.new_text.split("---\r\n")[-1] == body.replace("\n", "\r\n") + "\r\n"
    assert "\n" not in crlf.new_text.replace("\r\n", "")


def test_an_emptied_limits_goes_and_existing_claim_lists_grow():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: net, resourceClaimName: nic}]\n"
            "  containers:\n  - name: a\n    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 2\n"
            "      claims:\n      - name: net\n")
    [result] = rewrite_sources([Source("p.yaml", text)])
    assert result.new_text.split("---\n")[-1] == (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  resourceClaims: [{name: net, resourceClaimName: nic}, {name: gpu, resourceClaimTemplateName: p-gpu}]\n"
        "  containers:\n  - name: a\n    image: x\n    resources:\n      claims:\n      - name: net\n      - name: gpu\n")


def _subsequence(needles: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(line == h for h in it) for line in needles)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_comment_lines_survive(path):
    comments = [line.strip() for line in path.read_text().splitlines() if line.strip().startswith("#")]
    out = [line.strip() for line in _one(path).new_text.splitlines()]
    assert all(c in out for c in comments)


def _legacy_counts(spec: dict) -> list[tuple[str, dict[str, int]]]:
    found = []
    for group in ("initContainers", "containers"):
        for c in spec.get(group) or []:
            limits = (c.get("resources") or {}).get("limits") or {}
            asked = {k: int(v) for k, v in limits.items() if device_for(k)}
            if asked:
                found.append((c["name"], asked))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_container_gets_claims_of_the_same_count_and_kind(path):
    before = [d for d in yaml.safe_load_all(path.read_text()) if d]
    after = [d for d in yaml.safe_load_all(_one(path).new_text) if d]
    templates = {d["metadata"]["name"]: d for d in after if d["kind"] == "ResourceClaimTemplate"}
    workloads = {(d["kind"], d["metadata"]["name"]): d for d in after if d["kind"] != "ResourceClaimTemplate"}
    pods = [(pod.spec, new_pod.spec) for doc in before
            for pod, new_pod in zip(pod_specs(doc), pod_specs(workloads[(doc["kind"], doc["metadata"]["name"])]))]
    assert pods, "no workload"
    for spec, new_spec in pods:
        assert not _legacy_counts(new_spec), "a legacy limit is left"
        entries = {e["name"]: templates[e["resourceClaimTemplateName"]] for e in new_spec.get("resourceClaims", [])}
        containers = {c["name"]: c for g in ("initContainers", "containers") for c in new_spec.get(g) or []}
        for name, asked in _legacy_counts(spec):
            claims = [entries[c["name"]] for c in containers[name]["resources"]["claims"]]
            got: dict[str, int] = {}
            for template in claims:
                for request in template["spec"]["spec"]["devices"]["requests"]:
                    exactly = request["exactly"]
                    selectors = exactly.get("selectors") or []
                    if exactly["deviceClassName"] == "gpu.nvidia.com":
                        assert not selectors
                        resource = "nvidia.com/gpu"
                    else:
                        assert exactly["deviceClassName"] == "mig.nvidia.com"
                        profile = re.fullmatch(r"device\.attributes\['gpu\.nvidia\.com'\]\.profile == '(.+)'",
                                               selectors[0]["cel"]["expression"]).group(1)
                        resource = f"nvidia.com/mig-{profile}"
                    got[resource] = got.get(resource, 0) + exactly.get("count", 1)
            assert got == asked, f"{path.name}: container {name}"


def test_documents_without_legacy_requests_are_kept_as_they_were():
    path = CORPUS / "14-multi-document.yaml"
    text, new = path.read_text(), _one(path).new_text
    for chunk in text.split("---\n"):
        if "nvidia.com/gpu" not in chunk:
            assert chunk in new


def test_the_rewrite_is_done_once():
    for f in rewrite_sources(read_paths([str(CORPUS)])):
        [again] = rewrite_sources([Source("again", f.new_text)])
        assert not again.changed


def test_an_init_container_reuses_the_claim_of_an_app_container_that_asks_the_same():
    same = _one(CORPUS / "06-pod-init-check.yaml").documents[0]
    assert [c.containers for c in same.plan.claims] == [("app", "precheck")]
    different = _one(CORPUS / "07-pod-init-different.yaml").documents[0]
    assert sorted(c.containers for c in different.plan.claims) == [("train",), ("warmup",)]
    assert "claim of its own" in different.plan.notes[0]
    assert {d.resource: n for d, n in effective_devices(different.workload).items()} == {"nvidia.com/gpu": 2}


def test_a_sidecar_counts_beside_the_app():
    doc = _one(CORPUS / "09-pod-sidecar.yaml").documents[0]
    assert [r.role for r in doc.workload.requests] == ["sidecar", "container"]
    assert len(doc.plan.claims) == 2
    assert {d.resource: n for d, n in effective_devices(doc.workload).items()} == {"nvidia.com/gpu": 2}


def test_indentation_and_quotes_follow_the_file():
    new = _one(CORPUS / "17-quoted-indented.yaml").new_text
    assert "                        claims:\n                            -   name: gpu\n" in new
    assert "            resourceClaims:\n                -   name: gpu\n" in new
    assert "'cpu': '2'" in new


def test_templates_keep_the_workload_namespace():
    [tmpl, _] = [d for d in yaml.safe_load_all(_one(CORPUS / "02-deployment-requests-and-limits.yaml").new_text)]
    assert tmpl["metadata"] == {"name": "vllm-gpu", "namespace": "inference"}
    assert tmpl["spec"]["spec"]["devices"]["requests"] == [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 2}}]


def test_other_nvidia_resources_are_named_and_left():
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: a\n    image: x\n"
            "    resources:\n      limits:\n        nvidia.com/gpu: 1\n        nvidia.com/gpu.shared: 1\n")
    result = migrate([Source("p.yaml", text)])
    assert "nvidia.com/gpu.shared: 1" in result.files[0].new_text
    assert any("nvidia.com/gpu.shared (container a)" in n for n in result.notes)


def test_custom_kinds_get_claims_per_pod_template():
    pytorch, jobset, ray = _one(DATA / "custom-kinds" / "legacy-ml-jobs.yaml").documents
    assert [(c.pod, c.template, c.containers) for c in pytorch.plan.claims] == [
        ("Master", "ddp-master-gpu", ("pytorch",)), ("Worker", "ddp-worker-gpu", ("pytorch", "warmup"))]
    assert pytorch.plan.notes == ("Worker: init container 'warmup' shares the claim of container 'pytorch' (it runs "
                                  "before it, and the legacy pod reused the same devices)",)
    assert [(c.pod, c.template) for c in jobset.plan.claims] == [("trial", "sweep-gpu")]
    assert [(c.pod, c.template) for c in ray.plan.claims] == [("gpu-workers", "ray-gpu")]
    new = yaml.safe_load_all(_one(DATA / "custom-kinds" / "legacy-ml-jobs.yaml").new_text)
    job = next(d for d in new if d["kind"] == "PyTorchJob")
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "ddp-worker-gpu"}]
    assert worker["containers"][0]["resources"] == {"limits": {"memory": "64Gi"}, "claims": [{"name": "gpu"}]}
