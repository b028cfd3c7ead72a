"""validate's YAML loader builds exactly the documents PyYAML's safe loader builds (it only builds plain strings,
mappings and lists faster), over every YAML file of the test data and the odd cases it hands back."""

from __future__ import annotations

import yaml

from drawb.render.sources import parse_text
from tests.conftest import DATA

ODD = """\
base: &base {count: 2, on: yes, when: 2024-01-02T03:04:05Z, ratio: 0.5, none: ~, "quoted": '7'}
merged:
  <<: *base
  count: 3
alias: *base
numbers: {1: one, 2.5: two}
binary: !!binary aGVsbG8=
list: [a, 1, true, null, [nested]]
duplicate: first
duplicate: second
"""


def test_the_documents_are_pyyamls():
    files = sorted(p for p in DATA.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert len(files) > 150
    for path in files:
        text = path.read_text()
        try:
            expected = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError:
            continue
        source = parse_text(str(path), text)
        assert source.documents == [d for d in expected if isinstance(d, dict)] or any(
            isinstance(d, dict) and d.get("kind") == "List" for d in expected), path


def test_odd_nodes_go_to_pyyamls_constructor():
    [doc] = parse_text("odd.yaml", ODD).documents
    assert doc == yaml.safe_load(ODD)
    assert doc["merged"]["count"] == 3 and doc["merged"][True] is True and doc["duplicate"] == "second"
