"""The API server's rules: what a kube-apiserver of the target version refuses a document for.

One home, read by ``validate`` and ``render`` (drawb.render), ``apply`` (through them) and the simulated
API server (drawb.cluster.sim), in the order the server checks: the ``resource.k8s.io`` version must be
served (``served``), its name must be one the server takes (``names``), the document must fit the strict OpenAPI schema of its own group version
(``schema``), and the validation rules of DRA objects and pods must hold (``checks``: findings with
``refused_by_server``; the same walk gives drawb's advice about the objects as warnings).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from drawb.apirules.checks import World, cross_reference_issues
from drawb.apirules.issue import Issue, label
from drawb.apirules.names import name_refusals
from drawb.apirules.schema import schema_issues
from drawb.apirules.served import unserved

__all__ = ["Issue", "World", "cross_reference_issues", "default_selector_compiler", "label", "name_refusals", "rule_refusals",
           "schema_issues", "schema_refusals", "unserved"]


@functools.lru_cache(maxsize=1024)
def default_selector_compiler(expression: str, kubernetes_version: str) -> None:
    """Compile a selector as the API server of ``kubernetes_version`` would; raises CELCompileError."""
    from drawb.cel import compile_selector

    compile_selector(expression, kubernetes_version=kubernetes_version, stored=False)


def schema_refusals(doc: dict, kubernetes_version: str) -> list[Issue]:
    """What the strict schema of ``doc``'s own group version refuses (ask ``unserved`` first: a version the
    server does not serve is refused before any schema is read)."""
    return [i for i in schema_issues(doc, label(doc), kubernetes_version) if i.refused_by_server]


def rule_refusals(doc: dict, kubernetes_version: str, namespace_labels: Callable[[str], dict | None]) -> list[Issue]:
    """What the server's validation refuses ``doc`` for (run on the object as stored: gated fields dropped)."""
    world = World(kubernetes_version=kubernetes_version, compile_selector=default_selector_compiler,
                  namespace_labels=namespace_labels, as_stored=True)
    return [i for i in cross_reference_issues([doc], world) if i.refused_by_server]
