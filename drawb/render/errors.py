"""Errors raised while finding, rendering and validating templates."""

from __future__ import annotations

from drawb.apirules.issue import Issue
from drawb.errors import PROG, DrawbError


class RenderError(DrawbError, ValueError):
    """Base of every error drawb.render raises for bad user input or a broken template."""


class TemplateNotFound(RenderError):
    """No template of that name in the bundled set or the user's folders."""

    hint = f"`{PROG} templates` lists them"


class TemplateError(RenderError):
    """A template file is broken: bad header, Jinja syntax, or a variable its header does not declare."""

    title = "BrokenTemplate"
    hint = "fix the template file"


class ParameterError(RenderError):
    """A value is missing, unknown, or invalid for its parameter (of ``template``, when named)."""

    title = "InvalidValue"

    def __init__(self, message: str, *, parameter: str | None = None, template: str | None = None):
        super().__init__(message, hint=f"`{PROG} templates {template}` lists its parameters" if template else None)
        self.parameter = parameter
        self.template = template


class ManifestInvalid(RenderError):
    """Rendered manifests failed schema or cross-reference validation."""

    title = "InvalidManifest"
    hint = "fix the values or the template; nothing was exported or applied"

    def __init__(self, template: str, issues: list[Issue]):
        self.template = template
        self.issues = issues
        errors = [i for i in issues if i.level == "error"]
        lines = "\n".join(f"  - {i}" for i in errors)
        super().__init__(f"template {template!r} rendered invalid manifests ({len(errors)} problem(s)):\n{lines}")
