"""The credentials of a loaded kubeconfig, handed to drawb's redaction so no message can show them."""

from __future__ import annotations

from pathlib import Path

from kubernetes.client import Configuration

from drawb.redact import guard_logging, remember


def remember_credentials(configuration: Configuration) -> None:
    """Remember every secret the client's configuration holds (tokens, passwords, the client key),
    also a token an exec plugin or a refresh hands it later; redact the HTTP stack's log records."""
    guard_logging()
    _remember_now(configuration)
    refresh = configuration.refresh_api_key_hook
    if refresh is not None and not getattr(refresh, "_drawb_remembers", False):
        def remembering_refresh(config: Configuration) -> None:
            refresh(config)
            _remember_now(config)

        remembering_refresh._drawb_remembers = True
        configuration.refresh_api_key_hook = remembering_refresh


def _remember_now(configuration: Configuration) -> None:
    remember(*(configuration.api_key or {}).values(), configuration.password)
    for path in (configuration.key_file,):
        if path:
            try:
                remember(Path(path).read_text(errors="replace"))
            except OSError:
                pass
