"""The API server's rules: what a kube-apiserver of the target version refuses a document for.

One home, read by ``validate`` and ``render`` (drawb.render), ``apply`` (through them) and the simulated
API server (drawb.cluster.sim), in the order the server checks: the ``resource.k8s.io`` version must be
served (``served``), the document must fit the strict OpenAPI schema of its own group version
(``schema``), and the validation rules of DRA objects and pods must hold (``checks``: findings with
``refused_by_server``; the same walk gives drawb's advice about the objects as warnings).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection

from drawb.apirules.checks import World, cross_reference_issues
from drawb.apirules.issue import Issue, label
from drawb.apirules.schema import schema_issues
from drawb.apirules.served import unserved

__all__ = ["Issue", "World", "cross_reference_issues", "default_selector_compiler", "label", "rule_refusals",
           "schema_issues", "schema_refusals", "unserved"]


@functools.lru_cache(maxsize=1024)
def default_selector_compiler(expression: str, kubernetes_version: str) -> None:
    """Compile a selector as the API server of ``kubernetes_version`` would; raises CELCompileError."""
    from drawb.cel import compile_selector

    compile_selector(expression, kubernetes_version=kubernetes_version, stored=False)


def schema_refusals(doc: dict, kubernetes_version: str, served: Collection[str] | None = None) -> list[Issue]:
    """What the server refuses ``doc`` for before it stores anything: a group version it does not serve
    (``served``: a cluster's; None: a default server's), else the strict schema of that group version."""
    refused = unserved(doc, label(doc), kubernetes_version, served)
    if refused is not None:
        return [refused]
    return [i for i in schema_issues(doc, label(doc), kubernetes_version) if i.refused_by_server]


def rule_refusals(doc: dict, kubernetes_version: str, namespace_labels: Callable[[str], dict | None]) -> list[Issue]:
    """What the server's validation refuses ``doc`` for (run on the object as stored: gated fields dropped)."""
    world = World(kubernetes_version=kubernetes_version, compile_selector=default_selector_compiler,
                  namespace_labels=namespace_labels)
    return [i for i in cross_reference_issues([doc], world) if i.refused_by_server]
