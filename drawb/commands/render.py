"""``templates`` and ``render``: manifest templates from ``%dra`` and the ``drawb`` command line.

``%dra render NAME --set key=value`` and ``%%dra render NAME`` (YAML values in the cell) take
``{{var}}`` from the notebook's namespace (on the magic's line IPython hands it over as ``{var}``,
which counts the same): a value that is exactly ``{{var}}`` becomes the variable's
Python value (an int stays an int); ``{{var}}`` inside longer text is replaced by ``str(var)``.
The values then go through drawb.render's checks like any other.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import yaml

from drawb.commands.registry import arg, command
from drawb.errors import UsageError
from drawb.session import Session

if TYPE_CHECKING:
    import pandas as pd

    from drawb import render as rendering

# ``{{var}}``; IPython already turns ``{{var}}`` on a magic's line into ``{var}``, so that form counts too.
_VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}|\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")


def _dirs(session: Session) -> list[str]:
    return [session.template_dir] if session.template_dir else []


@command(
    "templates",
    "List manifest templates (bundled, and your template_dir option), or one template's parameters.",
    arg("name", nargs="?", help="a template: show its parameters"),
)
def templates(session: Session, args, cell) -> pd.DataFrame:
    """One row per template, or one row per parameter of the named template."""
    from drawb import render as rendering

    import pandas as pd

    if args.name:
        info = rendering.get_template(args.name, _dirs(session))
        rows = [
            {"parameter": p.name, "type": p.describe_type(), "default": None if p.required else p.default,
             "required": p.required, "description": p.description}
            for p in info.params
        ]
        return pd.DataFrame(rows, columns=["parameter", "type", "default", "required", "description"])
    from drawb.commands.registry import with_warning
    from drawb.render.catalog import scan_templates

    found, broken = scan_templates(_dirs(session))
    rows = [
        {"template": t.name, "about": t.about, "parameters": ", ".join(p.name for p in t.params),
         "source": t.source}
        for t in sorted(found.values(), key=lambda t: t.name)
    ]
    frame = pd.DataFrame(rows, columns=["template", "about", "parameters", "source"])
    if broken:
        lines = "\n".join(f"  - {error}" for error in broken.values())
        frame = with_warning(frame, f"BrokenTemplate: {len(broken)} file(s) of the template folder skipped; the "
                             f"others are listed:\n{lines}")
    return frame


def _placeholders(text: str, found: dict[str, str]) -> str:
    def swap(m: re.Match) -> str:
        token = f"drawbvar{len(found)}x"
        found[token] = m.group(1) or m.group(2)
        return token

    return _VAR.sub(swap, text)


def _resolve(value: Any, found: dict[str, str], user_ns: dict) -> Any:
    if isinstance(value, dict):
        return {k: _resolve(v, found, user_ns) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, found, user_ns) for v in value]
    if not isinstance(value, str) or not any(token in value for token in found):
        return value

    def lookup(token: str) -> Any:
        var = found[token]
        if var not in user_ns:
            raise UsageError(f"{{{{{var}}}}} names no variable of the notebook", hint=f"define {var} in a cell first")
        return user_ns[var]

    if value in found:
        return lookup(value)
    for token in found:
        if token in value:
            value = value.replace(token, str(lookup(token)))
    return value


def collect_values(sets: list[str], cell: str | None, user_ns: dict) -> dict[str, Any]:
    """Values from the cell's YAML mapping and ``--set key=value`` (which wins), ``{{var}}`` resolved."""
    found: dict[str, str] = {}
    values: dict[str, Any] = {}
    if cell is not None and cell.strip():
        try:
            parsed = yaml.safe_load(_placeholders(cell, found))
        except yaml.YAMLError as exc:
            raise UsageError(f"the cell is not YAML: {exc}", hint="write one `parameter: value` per line") from None
        if not isinstance(parsed, dict):
            raise UsageError("the cell must be a YAML mapping of parameter: value", hint="e.g. `count: 2`")
        values.update(parsed)
    for item in sets or []:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r} is not key=value", hint="e.g. --set count=2")
        values[key.strip()] = _placeholders(raw, found)
    return {k: _resolve(v, found, user_ns) for k, v in values.items()}


@command(
    "render",
    "Render a manifest template, validate it, and show, export (--out) or apply it (dry run first).",
    arg("name", help="template name (see `templates`)"),
    arg("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
        help="a parameter value; repeat for more; {{var}} takes a notebook variable"),
    arg("--out", help="write the manifests to this file (multi-document YAML)"),
    arg("-n", "--namespace", help="namespace of the manifests (default: the namespace option)"),
    arg("--dry-run", action="store_true", help="server-side dry run through the connected cluster"),
    arg("--apply", action="store_true", help="dry run, then apply through the connected cluster"),
    arg("--preview", action="store_true", help="where the rendered workload would fit now (see `preview`)"),
    cell="YAML values (parameter: value per line)",
)
def render(session: Session, args, cell) -> object:
    """Render, validate, then export and/or dry-run or apply through the session's cluster (or --preview it)."""
    from drawb import render as rendering

    values = collect_values(args.sets, cell, session.user_ns)
    applying = args.dry_run or args.apply
    cluster = session.cluster if applying else session.connected
    rendered = rendering.render(
        args.name,
        values,
        namespace=args.namespace or session.namespace,
        cluster=cluster,
        kubernetes_version=None if cluster is not None else session.rules_version,
        template_dirs=_dirs(session),
    )
    if args.out:
        rendered.export(args.out)
    if applying:
        from drawb.cluster.refusal import require_rights
        from drawb.commands.manifests import document_rights

        require_rights(cluster, f"{session.prog} render", document_rights(rendered.documents, ("get", "create", "patch"),
                                                                          args.namespace or session.namespace))
        rendered.apply(cluster, dry_run=not args.apply)
    if args.preview:
        from drawb.commands.preview import preview_workload, workload_for

        source = f"template {args.name}"
        workload = workload_for(session, None, None, args.namespace, rendered.documents, source)
        return preview_workload(session, workload)
    return rendered
