"""``%dra templates`` and ``%dra render`` through a real IPython shell, and ``drawb render`` on the command line."""

from __future__ import annotations

import yaml

from drawb.cli import main
from drawb.render import Rendered, read_export


def test_templates_lists_every_template_with_its_parameters(shell):
    frame = shell.run("%dra templates")
    assert {"single-gpu", "mig-profile", "first-available"} <= set(frame["template"])
    row = frame.set_index("template").loc["gpu-by-memory"]
    assert "min_memory" in row["parameters"] and row["source"] == "bundled"


def test_templates_name_shows_types_and_defaults(shell):
    frame = shell.run("%dra templates mig-profile").set_index("parameter")
    assert frame.loc["count", "type"] == "int 1..7" and frame.loc["count", "default"] == 1
    assert frame.loc["profile", "default"] == "1g.10gb"


def test_render_with_set_values(shell):
    r = shell.run("%dra render mig-profile --set profile=3g.40gb --set count=2 -n team-a")
    assert isinstance(r, Rendered)
    claim = r.documents[0]
    assert claim["metadata"]["namespace"] == "team-a"
    assert claim["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2


def test_render_takes_notebook_variables(shell):
    shell.run("n = 3\nprofile = '2g.20gb'")
    r = shell.run("%dra render mig-profile --set count={{n}} --set profile={{profile}}")
    exactly = r.documents[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["count"] == 3 and exactly["selectors"][0]["cel"]["expression"].endswith("'2g.20gb'")


def test_cell_form_takes_yaml_values_and_variables(shell):
    shell.run("products = ['L4', 'H200']")
    r = shell.run("%%dra render first-available\nproducts: {{products}}\npod_name: pick-{{n}}\n".replace(
        "{{n}}", "one"))
    doc = r.documents[0]
    assert [s["name"] for s in doc["spec"]["spec"]["devices"]["requests"][0]["firstAvailable"]] == ["l4", "h200", "any"]
    assert r.documents[1]["metadata"]["name"] == "pick-one"


def test_a_notebook_value_carrying_yaml_is_still_refused(shell, capsys):
    shell.run("evil = 'x\\nkind: Secret'")
    err = shell.fails("%dra render single-gpu --set pod_name={{evil}}")
    assert err.startswith("InvalidValue: parameter 'pod_name'") and "Traceback" not in err


def test_errors_are_one_named_line_with_a_hint(shell, capsys):
    err = shell.fails("%dra render gpu-by-memory --set min_memory=40GB")
    assert err.startswith("InvalidValue: parameter 'min_memory'") and "not a Kubernetes quantity" in err
    assert "Hint: `%dra templates gpu-by-memory` lists its parameters" in err
    assert "unknown parameter 'min_mem'" in shell.fails("%dra render gpu-by-memory --set min_mem=40Gi")
    assert shell.fails("%dra render no-such-template").startswith("TemplateNotFound: no template 'no-such-template'")
    assert "names no variable" in shell.fails("%dra render single-gpu --set undefined_var={{nope}}")


def test_out_writes_a_round_trippable_file(shell, tmp_path):
    out = tmp_path / "claim.yaml"
    r = shell.run(f"%dra render job --set completions=5 --out {out}")
    back = read_export(out.read_text())
    assert back.documents == r.documents and back.template == "job" and back.values["completions"] == 5


def test_user_template_folder_from_config(shell, user_dir):
    shell.run(f"%config DRAMagics.template_dir = {str(user_dir)!r}")
    frame = shell.run("%dra templates").set_index("template")
    assert frame.loc["note", "source"] == str(user_dir)
    r = shell.run("%dra render note --set claim_name=mine")
    assert r.documents[0]["metadata"]["name"] == "mine"


def test_render_dry_run_and_apply_go_through_the_connected_cluster(shell):
    shell.run("%dra connect")
    cluster = shell.ipython.find_magic("dra").__self__.session.cluster
    r = shell.run("%dra render single-gpu --dry-run -n default")
    assert r.applied == "dry run" and "API server" not in r._repr_markdown_()
    assert "accepted by the simulated cluster (Kubernetes 1.34 rules), dry run" in r._repr_markdown_()
    assert cluster.get("Pod", "cuda-check", "default") is None
    r = shell.run("%dra render single-gpu --apply -n default --set pod_name=applied-check")
    assert r.applied == "applied" and cluster.get("Pod", "applied-check", "default") is not None


def test_command_line_prints_yaml(capsys):
    assert main(["render", "single-gpu", "--set", "pod_name=cli-check"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs[1]["metadata"] == {"name": "cli-check", "namespace": "default"}


def test_command_line_takes_the_template_dir_option(capsys, user_dir):
    assert main(["--template-dir", str(user_dir), "templates"]) == 0
    assert "note" in capsys.readouterr().out
    assert main(["--template-dir", str(user_dir), "render", "note", "--set", "claim_name=mine"]) == 0
    assert "name: mine" in capsys.readouterr().out
