"""Jinja rendering with every value escaped as a YAML scalar.

Every ``{{ expression }}`` is written as a JSON scalar (a double-quoted string, a number, true/false,
or a flow list), which YAML reads back as exactly that value: no value can add keys, documents or
template code. Inside a CEL expression a template writes ``{{ value | cel }}``, a CEL literal with
CEL's own escaping, meant for block scalars (``expression: >-``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import jinja2
import jinja2.meta
import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from drawb.render.catalog import TemplateInfo
from drawb.render.errors import TemplateError


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Verbatim(str):
    """Text a filter has already escaped for its position; written as is."""


def _finalize(value: Any) -> str:
    if isinstance(value, Verbatim):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, (bool, int, float, str, list, tuple, dict)):
        return json.dumps(value, ensure_ascii=False)
    raise TemplateError(f"cannot write a {type(value).__name__} into YAML: {value!r}")


_CEL_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cel_literal(value: Any) -> Verbatim:
    """``value`` as a CEL literal: a single-quoted string with CEL escapes, an int, or a bool."""
    if isinstance(value, bool):
        return Verbatim("true" if value else "false")
    if isinstance(value, int):
        return Verbatim(str(value))
    if isinstance(value, str):
        body = "".join(_CEL_ESCAPES.get(c, c if ord(c) >= 32 else f"\\x{ord(c):02x}") for c in value)
        return Verbatim(f"'{body}'")
    raise TemplateError(f"cannot write a {type(value).__name__} as a CEL literal: {value!r}")


def dns_label(value: str) -> str:
    """``value`` squeezed into a DNS label: lower case, runs of other characters turned into '-'."""
    label = re.sub(r"[^a-z0-9]+", "-", str(value).lower()).strip("-")[:63].strip("-")
    return label or "x"


_ENV = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    finalize=_finalize,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters["cel"] = cel_literal
_ENV.filters["label"] = dns_label


def compile_template(info: TemplateInfo) -> jinja2.Template:
    """The compiled template; TemplateError if it has a syntax error or uses an undeclared variable."""
    return _compile(info.name, info.path, info.text, tuple(p.name for p in info.params))


@functools.lru_cache(maxsize=256)
def _compile(name: str, path: str, text: str, declared: tuple[str, ...]) -> jinja2.Template:
    try:
        ast = _ENV.parse(text)
    except jinja2.TemplateSyntaxError as e:
        raise TemplateError(f"{path}:{e.lineno}: Jinja syntax error: {e.message}") from None
    undeclared = sorted(jinja2.meta.find_undeclared_variables(ast) - set(declared) - set(_ENV.globals))
    if undeclared:
        raise TemplateError(
            f"{path}: template {name!r} uses {', '.join(map(repr, undeclared))}, which its header does "
            f"not declare; declared parameters: {', '.join(sorted(declared)) or '(none)'}"
        )
    return _ENV.from_string(text)


def unused_parameters(info: TemplateInfo) -> set[str]:
    """Parameters the header declares but the template body never uses."""
    return {p.name for p in info.params} - jinja2.meta.find_undeclared_variables(_ENV.parse(info.text))


def render_text(info: TemplateInfo, values: Mapping[str, Any]) -> str:
    """The template's output text for already-checked ``values``."""
    template = compile_template(info)
    try:
        return template.render(**values)
    except jinja2.UndefinedError as e:
        raise TemplateError(
            f"{info.path}: {e.message}; declared parameters: {', '.join(p.name for p in info.params)}"
        ) from None


def parse_documents(info: TemplateInfo, text: str) -> list[dict]:
    """The YAML documents of rendered text, empty ones dropped; each must be an object with apiVersion and kind."""
    try:
        docs = [d for d in yaml.load_all(text, Loader=_LOADER) if d is not None]
    except yaml.YAMLError as e:
        raise TemplateError(f"{info.path}: rendered text is not valid YAML: {e}") from None
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
            raise TemplateError(f"{info.path}: rendered document {i + 1} is not an object with apiVersion and kind")
    if not docs:
        raise TemplateError(f"{info.path}: template {info.name!r} rendered no documents")
    return docs
