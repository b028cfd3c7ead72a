"""Template parameters: their declared types, and checking values against them before rendering.

A value reaches a template only after it has been checked against its parameter's type, so that
it is a name, a quantity, a number, a compiled selector... and cannot carry YAML or Jinja syntax.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from drawb.api import Quantity, QuantityError
from drawb.api.names import is_dns1123_label, is_dns1123_subdomain, validate_fully_qualified_name
from drawb.render.errors import ParameterError, TemplateError

SelectorCompiler = Callable[[str, str], None]
"""``compile(expression, kubernetes_version)``; raises a ValueError with the API server's message if rejected."""

_REQUIRED = object()

_EXTENDED_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
# A container image reference: [registry[:port]/]path[:tag][@digest]
_IMAGE = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]+)?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?\Z"
)
# What YAML allows in a document (YAML 1.1 "printable"), minus tab and line breaks.
_PRINTABLE = re.compile("[\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_JINJA = ("{{", "}}", "{%", "%}", "{#", "#}")
# Text that only makes sense as YAML structure: a mapping separator, a comment, a document marker,
# or a leading indicator character.
_YAML_MARKERS = (": ", " #", "---", "...")
_YAML_LEADING = tuple("-?:,[]{}#&*!|>'\"%@`")

TYPES = (
    "string",
    "dns_label",
    "dns_subdomain",
    "qualified_name",
    "extended_resource_name",
    "quantity",
    "int",
    "bool",
    "enum",
    "image",
    "cel",
    "list",
)


@dataclass(frozen=True)
class Param:
    """One declared template parameter."""

    name: str
    type: str
    description: str
    default: Any = _REQUIRED
    choices: tuple[Any, ...] = ()
    min: int | None = None
    max: int | None = None
    pattern: str | None = None
    items: str | None = None

    @property
    def required(self) -> bool:
        """True when the parameter has no default."""
        return self.default is _REQUIRED

    def describe_type(self) -> str:
        """The type as shown to users: ``int 1..8``, ``enum Default|Short``, ``list of string``."""
        if self.type == "enum":
            return "enum " + "|".join(str(c) for c in self.choices)
        if self.type == "list":
            return f"list of {self.items}"
        if self.type == "int" and (self.min is not None or self.max is not None):
            lo = "" if self.min is None else self.min
            hi = "" if self.max is None else self.max
            return f"int {lo}..{hi}"
        return self.type


def param_from_header(entry: Mapping[str, Any], where: str) -> Param:
    """Build a Param from one ``params:`` entry of a template header; ``where`` names the file for errors."""
    known = {"name", "type", "description", "default", "choices", "min", "max", "pattern", "items"}
    if not isinstance(entry, Mapping):
        raise TemplateError(f"{where}: each params entry must be a mapping, got {entry!r}")
    unknown = set(entry) - known
    if unknown:
        raise TemplateError(f"{where}: params entry has unknown keys {sorted(unknown)}; allowed: {sorted(known)}")
    for key in ("name", "type", "description"):
        if not entry.get(key):
            raise TemplateError(f"{where}: params entry {entry.get('name', '?')!r} lacks {key!r}")
    name, ptype = entry["name"], entry["type"]
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise TemplateError(f"{where}: parameter name {name!r} must be a lower-case identifier (a-z, 0-9, _)")
    if ptype not in TYPES:
        raise TemplateError(f"{where}: parameter {name!r} has unknown type {ptype!r}; types: {', '.join(TYPES)}")
    if ptype == "enum" and not entry.get("choices"):
        raise TemplateError(f"{where}: enum parameter {name!r} needs choices")
    if ptype == "list" and (entry.get("items") not in TYPES or entry.get("items") == "list"):
        raise TemplateError(f"{where}: list parameter {name!r} needs items: one of {', '.join(TYPES[:-1])}")
    return Param(
        name=name,
        type=ptype,
        description=str(entry["description"]),
        default=entry.get("default", _REQUIRED),
        choices=tuple(entry.get("choices") or ()),
        min=entry.get("min"),
        max=entry.get("max"),
        pattern=entry.get("pattern"),
        items=entry.get("items"),
    )


@dataclass(frozen=True)
class CheckContext:
    """What value checks need beyond the value: the target version and a selector compiler."""

    kubernetes_version: str
    compile_selector: SelectorCompiler
    template: str | None = None  # named in the hint of an invalid value


def resolve_values(
    template: str, params: Sequence[Param], values: Mapping[str, Any], ctx: CheckContext
) -> dict[str, Any]:
    """Check ``values`` against ``params``: every name known, every required one given, every value valid."""
    by_name = {p.name: p for p in params}
    valid = ", ".join(by_name) or "(none)"
    for key in values:
        if key not in by_name:
            close = difflib.get_close_matches(str(key), list(by_name), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ParameterError(
                f"unknown parameter {key!r} for template {template!r}.{hint} Valid parameters: {valid}",
                parameter=str(key),
                template=template,
            )
    out: dict[str, Any] = {}
    for p in params:
        if p.name in values:
            raw = values[p.name]
        elif p.required:
            raise ParameterError(
                f"template {template!r} needs a value for {p.name!r} ({p.describe_type()}: {p.description}); "
                f"valid parameters: {valid}",
                parameter=p.name,
                template=template,
            )
        else:
            raw = p.default
        out[p.name] = check_value(p, raw, ctx)
    return out


def check_value(p: Param, raw: Any, ctx: CheckContext) -> Any:
    """The checked (and typed) value of ``raw`` for parameter ``p``; ParameterError naming ``p`` if invalid."""
    try:
        if p.type == "list":
            items = _as_list(raw)
            if p.min is not None and len(items) < p.min:
                raise ValueError(f"needs at least {p.min} item(s), got {len(items)}")
            if p.max is not None and len(items) > p.max:
                raise ValueError(f"takes at most {p.max} item(s), got {len(items)}")
            item = Param(p.name, p.items or "string", p.description, pattern=p.pattern, choices=p.choices)
            return [_check_scalar(item, v, ctx) for v in items]
        return _check_scalar(p, raw, ctx)
    except ParameterError:
        raise
    except ValueError as e:
        raise ParameterError(
            f"parameter {p.name!r} ({p.describe_type()}): {raw!r} {e}", parameter=p.name, template=ctx.template
        ) from None


def _as_list(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        return [s.strip() for s in raw.split(",") if s.strip()] if raw.strip() else []
    if isinstance(raw, (list, tuple)):
        return list(raw)
    raise ValueError("is not a list (give a list, or comma-separated text)")


def _text(raw: Any, *, multiline: bool = False) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"is a {type(raw).__name__}, not text")
    for marker in _JINJA:
        if marker in raw:
            raise ValueError(f"carries Jinja syntax ({marker!r}); values are data, never template code")
    for ch in raw:
        if ch in "\n\r\t" and multiline:
            continue
        if not _PRINTABLE.match(ch):
            raise ValueError(f"contains a control character ({ch!r}); a value must be one line of printable text")
    return raw


def _check_scalar(p: Param, raw: Any, ctx: CheckContext) -> Any:
    t = p.type
    if t == "int":
        return _check_int(p, raw)
    if t == "bool":
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false"):
            return raw.lower() == "true"
        raise ValueError("is not a boolean (true or false)")
    if t == "enum":
        if raw in p.choices:
            return raw
        raise ValueError(f"is not one of {', '.join(map(str, p.choices))}")
    if t == "quantity":
        if isinstance(raw, bool):
            raise ValueError("is not a quantity")
        text = str(raw) if isinstance(raw, int) else _text(raw)
        try:
            Quantity.parse(text)
        except QuantityError as e:
            raise ValueError(f"is not a Kubernetes quantity ({e}); write e.g. 40Gi, 500M, 2") from None
        return text
    if t == "cel":
        text = _text(raw, multiline=True)
        if not text.strip():
            raise ValueError("is an empty selector")
        try:
            ctx.compile_selector(text, ctx.kubernetes_version)
        except ValueError as e:  # CELCompileError is a ValueError carrying the API server's message
            raise ValueError(f"does not compile as a DRA selector for Kubernetes {ctx.kubernetes_version}:\n{e}")
        return text
    text = _text(raw)
    if t == "string":
        if p.pattern is not None:
            if not re.fullmatch(p.pattern, text):
                raise ValueError(f"does not match the pattern {p.pattern}")
        else:
            _refuse_yaml(text)
        if len(text) > 253:
            raise ValueError(f"is {len(text)} characters long; at most 253")
        return text
    if t == "dns_label":
        _dns_label(text)
        return text
    if t == "dns_subdomain":
        _dns_subdomain(text)
        return text
    if t == "qualified_name":
        errors = validate_fully_qualified_name(text, p.name)
        if errors:
            raise ValueError(
                "is not a fully qualified attribute name (<domain>/<name>, e.g. gpu.nvidia.com/productName): "
                + "; ".join(errors)
            )
        return text
    if t == "extended_resource_name":
        domain, sep, name = text.partition("/")
        if not sep or not name:
            raise ValueError("is not an extended resource name (<domain>/<name>, e.g. nvidia.com/gpu)")
        _dns_subdomain(domain)
        if domain == "kubernetes.io" or domain.endswith(".kubernetes.io") or domain.startswith("requests."):
            raise ValueError("uses a reserved domain (kubernetes.io or requests.)")
        if not _EXTENDED_NAME.match(name) or len(name) > 63:
            raise ValueError(f"has an invalid name part {name!r}")
        return text
    if t == "image":
        if not _IMAGE.match(text):
            raise ValueError("is not a container image reference (registry/path:tag)")
        return text
    raise ValueError(f"has an unsupported type {t!r}")


def _check_int(p: Param, raw: Any) -> int:
    if isinstance(raw, bool):
        raise ValueError("is not an integer")
    if isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw.strip()):
        value = int(raw)
    elif isinstance(raw, int):
        value = raw
    else:
        raise ValueError("is not an integer")
    if p.min is not None and value < p.min:
        raise ValueError(f"is below the minimum {p.min}")
    if p.max is not None and value > p.max:
        raise ValueError(f"is above the maximum {p.max}")
    return value


def _refuse_yaml(text: str) -> None:
    if text.startswith(_YAML_LEADING) or text.endswith(":"):
        raise ValueError("starts or ends with a YAML indicator character; it looks like YAML, not a value")
    for marker in _YAML_MARKERS:
        if marker in text:
            raise ValueError(f"carries YAML syntax ({marker!r}); it looks like YAML, not a value")


def _dns_label(text: str) -> None:
    errors = is_dns1123_label(text)
    if errors:
        raise ValueError("is not a DNS label: " + "; ".join(errors))


def _dns_subdomain(text: str) -> None:
    errors = is_dns1123_subdomain(text)
    if errors:
        raise ValueError("is not a DNS subdomain: " + "; ".join(errors))
