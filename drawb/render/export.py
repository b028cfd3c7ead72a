"""Multi-document YAML with a stable key order, and reading it back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

_FIRST = ("apiVersion", "kind", "metadata", "name", "namespace", "spec")
_TEMPLATE_LINE = "# drawb template: "
_VALUES_LINE = "# drawb values: "
_NAMESPACE_LINE = "# drawb namespace: "


def _ordered(mapping: Mapping[str, Any]) -> list[tuple[str, Any]]:
    first = [(k, mapping[k]) for k in _FIRST if k in mapping]
    rest = sorted((k, v) for k, v in mapping.items() if k not in _FIRST)
    return first + rest


class _Dumper(yaml.SafeDumper):
    pass


def _represent_dict(dumper: yaml.SafeDumper, data: Mapping[str, Any]) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", _ordered(data))


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(str, _represent_str)


def dump_documents(documents: list[dict]) -> str:
    """``documents`` as multi-document YAML: apiVersion, kind, metadata, name, spec first, the rest sorted."""
    return yaml.dump_all(
        documents, Dumper=_Dumper, explicit_start=True, default_flow_style=False, allow_unicode=True, width=4096
    )


def dump_export(template: str, values: Mapping[str, Any], documents: list[dict], namespace: str | None = None) -> str:
    """The export file: comment lines naming the template, its values and namespace, then the documents."""
    header = f"{_TEMPLATE_LINE}{template}\n{_VALUES_LINE}{json.dumps(dict(values), sort_keys=True)}\n"
    if namespace is not None:
        header += f"{_NAMESPACE_LINE}{namespace}\n"
    return header + dump_documents(documents)


@dataclass(frozen=True)
class Exported:
    """What an export file holds: the template and values it was rendered from, and its documents."""

    template: str | None
    values: dict[str, Any]
    documents: list[dict]
    namespace: str | None = None


def read_export(text: str) -> Exported:
    """Parse an export file (or any multi-document YAML) back into its template, values and documents."""
    template, values, namespace = None, {}, None
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith(_TEMPLATE_LINE):
            template = line[len(_TEMPLATE_LINE):].strip()
        elif line.startswith(_VALUES_LINE):
            values = json.loads(line[len(_VALUES_LINE):])
        elif line.startswith(_NAMESPACE_LINE):
            namespace = line[len(_NAMESPACE_LINE):].strip()
    documents = [d for d in yaml.safe_load_all(text) if d is not None]
    return Exported(template, values, documents, namespace)
