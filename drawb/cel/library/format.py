"""The Kubernetes format library: format.<name>() named formats, format.named and validate."""

from __future__ import annotations

import base64
import re
from typing import Any, Callable

from drawb.cel.decls import FORMAT
from drawb.cel.library._registry import constant_cost, declare, declare_yaml, fn, implement
from drawb.cel.library.urls import is_url
from drawb.cel.ranges import REGEX_LENGTH, STRING_TRAVERSAL
from drawb.cel.values import OPTIONAL_NONE, Optional


MAX_NAME_FORMAT_REGEX = 128  # the longest pattern a named format checks with
MAX_FORMAT_SIZE = 64


def _validate_cost(c, overload, target, args):
    if not args:
        return None
    return c.size_of(args[0]).factor(STRING_TRAVERSAL).factor(MAX_NAME_FORMAT_REGEX * REGEX_LENGTH), None


_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_QUALIFIED = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


class _Format:
    cel_type_name = "kubernetes.NamedFormat"

    def __init__(self, name: str, check: Callable[[str], list[str]]) -> None:
        self.name, self.check = name, check


def _regex_check(pattern: re.Pattern, max_len: int | None, message: str) -> Callable[[str], list[str]]:
    def check(s: str) -> list[str]:
        errs = []
        if max_len is not None and len(s) > max_len:
            errs.append(f"must be no more than {max_len} characters")
        if not pattern.match(s):
            errs.append(message)
        return errs

    return check


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    return lambda s: check(s[:-1] if s.endswith("-") else s)


def _byte_check(s: str) -> list[str]:
    try:
        base64.b64decode(s, validate=True)
    except ValueError:
        return ["invalid base64"]
    return []


_LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
_FORMATS = {
    "dns1123Label": _regex_check(_DNS1123_LABEL, 63, _LABEL_MSG),
    "dns1123Subdomain": _regex_check(_DNS1123_SUBDOMAIN, 253, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
    "dns1035Label": _regex_check(_DNS1035_LABEL, 63, "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"),
    "qualifiedName": _regex_check(_QUALIFIED, 63, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "labelValue": _regex_check(_LABEL_VALUE, 63, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
    "uuid": _regex_check(_UUID, None, "does not match the UUID format"),
    "byte": _byte_check,
}  # fmt: skip
_FORMATS["dns1123LabelPrefix"] = _prefix(_FORMATS["dns1123Label"])
_FORMATS["dns1123SubdomainPrefix"] = _prefix(_FORMATS["dns1123Subdomain"])
_FORMATS["dns1035LabelPrefix"] = _prefix(_FORMATS["dns1035Label"])
_FORMATS["uri"] = lambda s: [] if is_url(s) else ["invalid URI"]
_FORMATS["date"] = _regex_check(re.compile(r"\d{4}-\d{2}-\d{2}\Z"), None, "invalid date")
_FORMATS["datetime"] = _regex_check(
    re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"), None, "invalid datetime"
)

FORMAT_NAMES = (
    "dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
    "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
    "datetime",
)  # fmt: skip
for _fname in FORMAT_NAMES:
    declare(f"format.{_fname}", (f"format.{_fname}", [], FORMAT, False))
for _fname, _check in _FORMATS.items():
    implement(f"format.{_fname}", (lambda f: lambda: f)(_Format(_fname, _check)))


@fn("format.named", cost=constant_cost)
def _format_named(name: Any) -> Optional:
    check = _FORMATS.get(name)
    return Optional(_Format(name, check)) if check else OPTIONAL_NONE


@fn("validate", cost=_validate_cost)
def _validate(f: Any, s: Any) -> Optional:
    errs = f.check(s)
    return Optional(errs) if errs else OPTIONAL_NONE


# `validate` and `format.named` return optional types, which only the YAML configuration can declare.
declare_yaml("""  - name: "validate"
    overloads:
      - id: "format-validate"
        target:
          type_name: "kubernetes.NamedFormat"
        args:
          - type_name: "string"
        return:
          type_name: "optional_type"
          params:
            - type_name: "list"
              params:
                - type_name: "string"
  - name: "format.named"
    overloads:
      - id: "format-named"
        args:
          - type_name: "string"
        return:
          type_name: "optional_type"
          params:
            - type_name: "kubernetes.NamedFormat"
""")
