"""Finding templates and reading their headers."""

from __future__ import annotations

import importlib.resources
import re
import textwrap
from pathlib import Path

import pytest

from drawb.render import TemplateError, TemplateNotFound, get_template, list_templates, render
from drawb.render.catalog import scan_templates
from drawb.render.engine import unused_parameters

REPO_TEMPLATES = Path(__file__).resolve().parents[3] / "templates"
REQUIRED_SCENARIOS = {
    "single-gpu", "shared-claim", "mig-profile", "multi-gpu-one-node", "gpu-by-memory", "first-available",
    "all-gpus", "time-slicing", "mps", "extended-resource", "admin-access", "job", "deployment",
}


def test_every_scenario_of_the_issue_has_a_template():
    assert REQUIRED_SCENARIOS <= {t.name for t in list_templates()}


def test_bundled_templates_are_the_files_of_the_top_level_folder():
    shipped = {e.name for e in importlib.resources.files("drawb.render.templates").iterdir() if e.name.endswith(".j2")}
    on_disk = {p.name for p in REPO_TEMPLATES.glob("*.yaml.j2")}
    assert shipped == on_disk
    assert {t.name + ".yaml.j2" for t in list_templates()} == on_disk


@pytest.mark.parametrize("info", list_templates(), ids=lambda t: t.name)
def test_every_header_declares_about_and_described_parameters(info):
    assert info.about and "\n" not in info.about
    assert info.params, "a template without parameters cannot be adapted"
    for p in info.params:
        assert p.description and p.type
        assert not p.required, f"bundled templates render with their defaults alone ({p.name} has none)"
    assert info.example, "a second set of values to test with"


def test_the_seed_template_is_the_single_gpu_claim_template_and_cuda_check_pod(compile_selector):
    r = render("single-gpu", compile_selector=compile_selector)
    assert [(d["kind"], d["metadata"]["name"]) for d in r.documents] == [
        ("ResourceClaimTemplate", "single-gpu"),
        ("Pod", "cuda-check"),
    ]


def test_unknown_template_lists_the_ones_that_exist():
    with pytest.raises(TemplateNotFound) as exc:
        get_template("singel-gpu")
    assert "'single-gpu'" in str(exc.value) and "mig-profile" in str(exc.value)


def test_user_folder_goes_through_the_same_machinery(user_dir, compile_selector):
    names = {t.name: t for t in list_templates([user_dir])}
    assert names["note"].source == str(user_dir)
    assert names["single-gpu"].source == "bundled"
    r = render("note", {"claim_name": "mine"}, template_dirs=[user_dir], compile_selector=compile_selector)
    assert r.documents[0]["metadata"] == {"name": "mine", "annotations": {"drawb.example/note": "hello"}}


def test_user_template_shadows_a_bundled_one(tmp_path, compile_selector):
    text = get_template("single-gpu").text.replace("cuda-check\n", "my-check\n", 1)
    (tmp_path / "single-gpu.yaml.j2").write_text(text)
    r = render("single-gpu", template_dirs=[tmp_path], compile_selector=compile_selector)
    assert r.documents[1]["metadata"]["name"] == "my-check"


def test_missing_user_folder_is_named():
    with pytest.raises(TemplateNotFound, match="does-not-exist"):
        list_templates(["/does-not-exist"])


def _write(folder: Path, body: str) -> None:
    (folder / "t.yaml.j2").write_text(textwrap.dedent(body))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("apiVersion: v1\nkind: Pod\n", "must start with a header"),
        ("{#- drawb\nparams: []\n-#}\n", "'about'"),
        ("{#- drawb\nabout: x\nparams: [{name: a, type: colour, description: d}]\n-#}\n", "unknown type 'colour'"),
        ("{#- drawb\nabout: x\nparams: [{name: a, type: int, description: d}]\nexample: {b: 1}\n-#}\n", "example"),
        ("{#- drawb\nabout: x\nparams: [{name: a, type: int}]\n-#}\n", "lacks 'description'"),
        ("{#- drawb\nabout: x\nparams:\n- {name: a, type: int, description: d}\n- {name: a, type: int, description: d}\n-#}\n",
         "declared twice"),
    ],
)
def test_broken_headers_are_named(tmp_path, body, message):
    _write(tmp_path, body)
    with pytest.raises(TemplateError, match=message):
        get_template("t", [tmp_path])
    found, broken = scan_templates([tmp_path])
    assert "t" not in found and re.search(message, str(broken["t"]))  # skipped, named; the rest stay usable
    assert "single-gpu" in {t.name for t in list_templates([tmp_path])}


def test_a_variable_the_header_does_not_declare_is_named_with_the_declared_ones(tmp_path, compile_selector):
    _write(tmp_path, """\
        {#- drawb
        about: x
        params: [{name: claim_name, type: dns_label, default: a, description: d}]
        -#}
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: {{ claim_nmae }}}
        """)
    with pytest.raises(TemplateError) as exc:
        render("t", template_dirs=[tmp_path], compile_selector=compile_selector)
    assert "'claim_nmae'" in str(exc.value) and "claim_name" in str(exc.value)


def test_jinja_syntax_errors_name_the_line(tmp_path, compile_selector):
    _write(tmp_path, """\
        {#- drawb
        about: x
        params: [{name: a, type: int, default: 1, description: d}]
        -#}
        apiVersion: v1
        kind: {% if a %}Pod
        """)
    with pytest.raises(TemplateError, match=r"t.yaml.j2:\d+: Jinja syntax error"):
        render("t", template_dirs=[tmp_path], compile_selector=compile_selector)


@pytest.mark.parametrize("info", list_templates(), ids=lambda t: t.name)
def test_every_declared_parameter_is_used(info):
    assert unused_parameters(info) == set()


def test_an_unused_parameter_is_found(tmp_path):
    _write(tmp_path, "{#- drawb\nabout: x\nparams: [{name: a, type: int, default: 1, description: d}]\n-#}\nkind: Pod\n")
    [info] = [t for t in list_templates([tmp_path]) if t.name == "t"]
    assert unused_parameters(info) == {"a"}
