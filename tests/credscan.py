"""A pytest plugin that fails any test whose output shows a credential.

Scanned per test phase: captured stdout and stderr, every log record at every level (the root
logger is set to DEBUG and a handler of this plugin keeps each record's message and traceback),
and the failure report. Looked for: every secret the harness made (``remember``,
``remember_kubeconfig``: tokens, passwords, client keys and the cluster's private keys, in the forms
they are written in) and anything credential-shaped (a PEM private key, an ``Authorization``
header, a bearer token, a JWT). A test that shows one fails with which secret and where, and its
captured output is masked so the report does not repeat it. The summary says how much was scanned.
"""

from __future__ import annotations

import base64
import logging
import os
import re
from pathlib import Path

import pytest
import yaml

_known: dict[str, str] = {}  # secret text -> what it is (never the secret itself)
_PATTERNS = (
    ("a PEM private key", re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")),
    ("an Authorization header", re.compile(r"(?i)authorization['\"]?\s*[:=]\s*['\"]?(?:bearer|basic)\s+(?!<redacted>)\S")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}")),
    ("a JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
)
_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL)
_MIN_LENGTH = 8
_PIECE = 24  # a long secret also counts as shown when a part of it is (pytest shortens long reprs in the middle)
_stats = {"reports": 0, "bytes": 0, "records": 0, "kubeconfigs": 0}
_leaks: list[str] = []


def remember(secret: str | bytes | None, what: str) -> None:
    """Look for ``secret`` (and, for PEM or base64 PEM data, each of its lines) in every later test's output."""
    if isinstance(secret, bytes):
        secret = secret.decode(errors="replace")
    if not secret or len(secret.strip()) < _MIN_LENGTH:
        return
    secret = secret.strip()
    _known[secret] = what
    for start in range(0, len(secret) - 2 * _PIECE + 1, _PIECE):  # any 2 * _PIECE characters of it show a piece
        _known.setdefault(secret[start:start + _PIECE], f"part of {what}")
    try:
        decoded = base64.b64decode(secret, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        decoded = secret
    for line in decoded.splitlines():
        if len(line) >= _MIN_LENGTH and not line.startswith("-----"):
            _known[line] = what


def remember_file(path: str | Path, what: str) -> None:
    """Remember the contents of a key or token file."""
    try:
        remember(Path(path).read_text(errors="replace"), what)
    except OSError:
        pass


def remember_kubeconfig(path: str | Path) -> None:
    """Remember every credential of a kubeconfig: tokens, passwords, client keys (inline or files), token files."""
    path = Path(path)
    try:
        config = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        return
    _stats["kubeconfigs"] += 1
    for entry in config.get("users") or []:
        user, name = entry.get("user") or {}, f"user {entry.get('name')!r} of {path}"
        remember(user.get("token"), f"the token of {name}")
        remember(user.get("password"), f"the password of {name}")
        remember(user.get("client-key-data"), f"the client key of {name}")
        for key, what in (("client-key", "client key"), ("tokenFile", "token file")):
            if user.get(key):
                remember_file(path.parent / user[key], f"the {what} of {name}")
        for key, value in ((user.get("auth-provider") or {}).get("config") or {}).items():
            if "token" in key or "secret" in key:
                remember(value, f"the auth-provider {key} of {name}")


def remember_cluster(cluster_dir: str | Path, kubeconfig: str | Path) -> None:
    """Remember a local cluster's admin kubeconfig and every private key of its PKI."""
    remember_kubeconfig(kubeconfig)
    for key in sorted(Path(cluster_dir).glob("pki/**/*.key")):
        remember_file(key, f"the private key {key.name} of {cluster_dir}")


class _Records(logging.Handler):
    """Keeps the text of every log record of the current test phase."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []
        self._formatter = logging.Formatter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:
            text = f"{record.msg} {record.args}"
        if record.exc_info:
            text += "\n" + self._formatter.formatException(record.exc_info)
        self.texts.append(text)
        _stats["records"] += 1

    def take(self) -> str:
        texts, self.texts = self.texts, []
        return "\n".join(texts)


_handler = _Records()


def find(text: str) -> list[str]:
    """What credentials ``text`` shows, in words (never the secret itself)."""
    found = [what for secret, what in _known.items() if secret in text]
    found += [what for what, pattern in _PATTERNS if pattern.search(text)]
    return sorted(set(found))


def mask(text: str) -> str:
    """``text`` with every remembered secret and credential-shaped string replaced."""
    text = _PEM_BLOCK.sub("<credscan: masked>", text)
    for secret in sorted(_known, key=len, reverse=True):
        text = text.replace(secret, "<credscan: masked>")
    for _, pattern in _PATTERNS:
        text = pattern.sub("<credscan: masked>", text)
    return text


def pytest_configure(config: pytest.Config) -> None:
    root = logging.getLogger()
    config._credscan_level = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(_handler)
    if os.environ.get("KUBECONFIG"):
        for path in os.environ["KUBECONFIG"].split(os.pathsep):
            remember_kubeconfig(path)
    for cluster_dir in (Path(os.environ.get("DRAWB_CACHE", Path.home() / ".cache" / "drawb")) / "kwok" / "clusters").glob("*"):
        remember_cluster(cluster_dir, cluster_dir / "kubeconfig.yaml")


def pytest_unconfigure(config: pytest.Config) -> None:
    root = logging.getLogger()
    root.removeHandler(_handler)
    root.setLevel(getattr(config, "_credscan_level", logging.WARNING))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    texts = [(name, content) for name, content in report.sections]
    texts.append((f"log records ({call.when})", _handler.take()))
    if report.longrepr is not None:
        texts.append(("the failure report", report.longreprtext))
    _stats["reports"] += 1
    _stats["bytes"] += sum(len(t) for _, t in texts)
    leaks = [f"{what} in {where}" for where, text in texts if text for what in find(text)]
    if not leaks:
        return
    report.sections = [(name, mask(content)) for name, content in report.sections]
    if getattr(item, "_credscan_failed", False):  # the sections repeat earlier phases' output: told once
        return
    item._credscan_failed = True
    message = f"credscan: {item.nodeid} ({call.when}) shows a credential: " + "; ".join(sorted(set(leaks)))
    _leaks.append(message)
    report.outcome = "failed"
    report.longrepr = message


def pytest_terminal_summary(terminalreporter) -> None:
    known = len(_known)
    line = (f"credscan: {_stats['reports']} test phases scanned ({_stats['bytes']} characters of output, "
            f"{_stats['records']} log records at every level) for {known} known secrets "
            f"({_stats['kubeconfigs']} kubeconfigs) and {len(_PATTERNS)} credential patterns: ")
    terminalreporter.write_line(line + (f"{len(_leaks)} leak(s)" if _leaks else "no credential found"))
    for leak in _leaks:
        terminalreporter.write_line("  " + leak)
