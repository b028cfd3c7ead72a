"""The API server's rule for object names: a DNS subdomain (a Namespace's: a DNS label), and never none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drawb.api.names import is_dns1123_label, is_dns1123_subdomain
from drawb.apirules.issue import Issue, label

_LABEL_NAMED = {"Namespace"}


def name_refusals(doc: Mapping[str, Any]) -> list[Issue]:
    """The server's refusal of ``doc``'s name (``message``: the problem with it), or nothing."""
    name = (doc.get("metadata") or {}).get("name") or ""
    if not isinstance(name, str):
        return []  # the schema refuses a name that is not a string
    if not name:
        return [Issue("error", label(doc), "metadata.name", "every object needs a name", refused_by_server=True)]
    check = is_dns1123_label if doc.get("kind") in _LABEL_NAMED else is_dns1123_subdomain
    return [Issue("error", label(doc), "metadata.name", problem, refused_by_server=True) for problem in check(name)]
