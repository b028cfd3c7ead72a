"""Finding templates (bundled and the user's folders) and reading their headers.

A template is a ``<name>.yaml.j2`` file that starts with a Jinja comment holding YAML::

    {#- drawb
    about: One line on what the template is for.
    params:
      - {name: count, type: int, min: 1, max: 8, default: 2, description: GPUs in the claim}
    example: {count: 4}
    -#}

``example`` is a second set of values (besides the defaults) that tests render and apply.
"""

from __future__ import annotations

import difflib
import functools
import importlib.resources
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from drawb.render.errors import TemplateError, TemplateNotFound
from drawb.render.params import Param, param_from_header

SUFFIX = ".yaml.j2"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
BUNDLED = "bundled"
_HEADER = re.compile(r"\A\{#-?[ \t]*drawb[ \t]*\n(?P<body>.*?)\n[ \t]*-?#\}", re.DOTALL)


@dataclass(frozen=True)
class TemplateInfo:
    """A template's name, header and source text."""

    name: str
    about: str
    params: tuple[Param, ...]
    example: dict  # a second set of values, besides the defaults, that the template is tested with
    source: str  # "bundled" or the user folder it came from
    path: str
    text: str

    def param(self, name: str) -> Param | None:
        """The parameter called ``name``, or None."""
        return next((p for p in self.params if p.name == name), None)


@functools.lru_cache(maxsize=512)
def parse_template(name: str, text: str, source: str, path: str) -> TemplateInfo:
    """Read a template's header; TemplateError says what is wrong with it and where."""
    m = _HEADER.match(text)
    if not m:
        raise TemplateError(
            f"{path}: a template must start with a header comment '{{#- drawb' holding 'about:' and 'params:'"
        )
    try:
        header = yaml.load(m.group("body"), Loader=_LOADER) or {}
    except yaml.YAMLError as e:
        raise TemplateError(f"{path}: the header is not valid YAML: {e}") from None
    if not isinstance(header, dict):
        raise TemplateError(f"{path}: the header must be a YAML mapping with 'about' and 'params'")
    unknown = set(header) - {"about", "params", "example"}
    if unknown:
        raise TemplateError(f"{path}: the header has unknown keys {sorted(unknown)}; allowed: about, params, example")
    about = header.get("about")
    if not isinstance(about, str) or not about.strip() or "\n" in about.strip():
        raise TemplateError(f"{path}: the header needs 'about': one line on what the template is for")
    entries = header.get("params") or []
    if not isinstance(entries, list):
        raise TemplateError(f"{path}: 'params' must be a list")
    params = tuple(param_from_header(e, path) for e in entries)
    names = [p.name for p in params]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise TemplateError(f"{path}: parameters declared twice: {', '.join(dupes)}")
    example = header.get("example") or {}
    if not isinstance(example, dict) or set(example) - set(names):
        raise TemplateError(f"{path}: 'example' must map declared parameters to values; declared: {', '.join(names)}")
    return TemplateInfo(
        name=name, about=about.strip(), params=params, example=example, source=source, path=path, text=text
    )


def _bundled() -> Iterable[tuple[str, str, str]]:
    root = importlib.resources.files("drawb.render.templates")
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(SUFFIX) and not entry.name.startswith("_"):
            yield entry.name[: -len(SUFFIX)], entry.read_text(encoding="utf-8"), f"{BUNDLED}:{entry.name}"


def _folder(folder: str | Path) -> Iterable[tuple[str, str, str]]:
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise TemplateNotFound(f"template folder {str(path)!r} does not exist or is not a folder")
    for entry in sorted(path.glob(f"*{SUFFIX}")):
        if not entry.name.startswith("_"):
            try:
                text = entry.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                text = _UNREADABLE + str(exc)
            yield entry.name[: -len(SUFFIX)], text, str(entry)


_UNREADABLE = "\0unreadable: "  # what _folder yields for a file it cannot read (no template text starts so)


def scan_templates(
    template_dirs: Sequence[str | Path] = (),
) -> tuple[dict[str, TemplateInfo], dict[str, TemplateError]]:
    """Every usable template by name (the user's folders shadow bundled ones of the same name), and each
    broken file of the user's folders by name with its problem: one broken file leaves the others usable."""
    found: dict[str, TemplateInfo] = {}
    broken: dict[str, TemplateError] = {}
    for folder in template_dirs:
        for name, text, path in _folder(folder):
            if name in found or name in broken:
                continue
            try:
                if text.startswith(_UNREADABLE):
                    raise TemplateError(f"{path}: cannot be read: {text[len(_UNREADABLE):]}")
                found[name] = parse_template(name, text, str(folder), path)
            except TemplateError as exc:
                broken[name] = exc
    for name, text, path in _bundled():
        if name not in found and name not in broken:
            found[name] = parse_template(name, text, BUNDLED, path)
    return found, broken


def list_templates(template_dirs: Sequence[str | Path] = ()) -> list[TemplateInfo]:
    """Every usable template, by name (``scan_templates`` also names the broken files)."""
    return sorted(scan_templates(template_dirs)[0].values(), key=lambda t: t.name)


def get_template(name: str, template_dirs: Sequence[str | Path] = ()) -> TemplateInfo:
    """The template called ``name``; its TemplateError when its file is broken; TemplateNotFound lists the ones that exist."""
    templates, broken = scan_templates(template_dirs)
    if name in broken:
        raise broken[name]
    if name in templates:
        return templates[name]
    close = difflib.get_close_matches(name, list(templates), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise TemplateNotFound(f"no template {name!r}.{hint} Templates: {', '.join(templates)}")
