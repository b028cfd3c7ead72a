"""Credentials never reach a message: a registry of the secrets drawb has loaded, and ``redact``.

A kubeconfig's secrets (bearer tokens, exec plugin tokens, passwords, client key data) are
remembered when drawb loads it; ``redact`` replaces them, and anything that looks like a credential
(a PEM private key, an ``Authorization`` header, a bearer token, a URL's user:password, a
``token:``/``password:`` field of YAML or JSON), with ``<redacted>``. Every DrawbError's text passes
through it, and so do the records of the loggers under drawb's cluster access (``guard_logging``).
"""

from __future__ import annotations

import base64
import logging
import re
import threading

REDACTED = "<redacted>"
_MIN_LENGTH = 8  # shorter strings are too common to replace everywhere (and too weak to be real secrets)

_known: set[str] = set()
_lock = threading.Lock()

_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)", re.DOTALL),
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer|basic)?\s*[^\s'\",}]+"),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(?=@)"),
    re.compile(r"(?i)((?:^|[\s{,\"'(\[])(?:token|id[-_]token|refresh[-_]token|access[-_]token|password|"
               r"client[-_]key[-_]data|client[-_]secret|secret)['\"]?\s*[:=]\s*['\"]?)(?!<redacted>|=)[^\s'\",});\]]+"),
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+"),  # a JWT (ServiceAccount tokens)
)


def remember(*secrets: object) -> None:
    """Add secrets to redact from now on (values shorter than 8 characters are ignored)."""
    with _lock:
        for secret in secrets:
            if isinstance(secret, bytes):
                secret = secret.decode(errors="replace")
            if isinstance(secret, str):
                for value in _forms(secret.strip()):
                    if len(value) >= _MIN_LENGTH:
                        _known.add(value)


def _forms(secret: str) -> list[str]:
    """A secret and the forms it is written in: ``Bearer x`` also as ``x``; base64 PEM data also decoded, line by line."""
    forms = [secret]
    if secret.lower().startswith(("bearer ", "basic ")):
        forms.append(secret.split(None, 1)[1])
    if secret.lower().startswith("basic "):  # base64 of user:password: the password is the secret
        try:
            user_password = base64.b64decode(forms[-1], validate=True).decode()
            forms += [user_password, user_password.partition(":")[2]]
        except (ValueError, UnicodeDecodeError):
            pass
    try:
        decoded = base64.b64decode(secret, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        decoded = secret if "-----BEGIN" in secret else ""
    if "-----BEGIN" in decoded:
        forms.append(decoded)
        forms += [line for line in decoded.splitlines() if line and not line.startswith("-----")]
    return forms


def known_count() -> int:
    """How many secret strings are remembered."""
    return len(_known)


def redact(text: str) -> str:
    """``text`` with every remembered secret and every credential-looking string replaced by ``<redacted>``."""
    if not text:
        return text
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.re.groups else "") + REDACTED, text)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message (formatted with its arguments) in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not fit its format: leave it to the handler
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


_FILTER = RedactingFilter()
# A logger's filter sees only the records logged on that very logger, so these are named exactly:
# the root logger (the official client's kubeconfig loader logs exec plugin failures, with their
# stderr, through ``logging.error``) and urllib3's (retries and connection errors, with URLs).
_LOGGERS = ("", "urllib3.connectionpool", "urllib3.util.retry", "kubernetes.client.rest")


def guard_logging() -> None:
    """Redact the records of the loggers cluster access writes to (idempotent)."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
