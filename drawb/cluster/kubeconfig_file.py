"""The kubeconfig file(s) as files: where they are, whether they are YAML, which context is current.

Read without the Kubernetes client (finding the kubeconfig's current context costs no client import).
"""

from __future__ import annotations

import os
from pathlib import Path

from drawb.cluster.protocol import NotConnected

DEFAULT_KUBECONFIG = "~/.kube/config"


class KubeconfigInvalid(NotConnected):
    """A kubeconfig file that is not YAML; names the file, line and column."""

    hint = "fix the file (kubectl config view shows what kubectl reads), or pass another with --kubeconfig PATH"


def kubeconfig_source(kubeconfig: str | None = None) -> str:
    """The kubeconfig drawb reads: ``kubeconfig``, else ``$KUBECONFIG`` (a list of paths), else ``~/.kube/config``."""
    return kubeconfig or os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def kubeconfig_files(kubeconfig: str | None = None) -> list[Path]:
    """The kubeconfig files that exist, in the order they are merged."""
    paths = [Path(raw).expanduser() for raw in kubeconfig_source(kubeconfig).split(os.pathsep) if raw]
    return [path for path in paths if path.is_file()]


def check_kubeconfig_yaml(kubeconfig: str | None) -> None:
    """Raise KubeconfigInvalid (file, line, column) when a kubeconfig file is not YAML; missing files pass
    (connecting names them)."""
    import yaml

    for path in kubeconfig_files(kubeconfig):
        try:
            yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            error = KubeconfigInvalid(f"the kubeconfig {where} is not valid YAML: {problem}")
            error.server = str(path)
            raise error from None


def current_context(kubeconfig: str | None = None) -> str | None:
    """The current context of the kubeconfig (the first file that sets one, as kubectl merges), or None."""
    import yaml

    for path in kubeconfig_files(kubeconfig):
        try:
            config = yaml.safe_load(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, yaml.YAMLError):
            return None
        if isinstance(config, dict) and config.get("current-context"):
            return str(config["current-context"])
    return None
