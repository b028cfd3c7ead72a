"""Exec credential plugins (``users[].user.exec`` of a kubeconfig), run as kubectl runs them, without a terminal.

The plugin gets ``KUBERNETES_EXEC_INFO`` (an ExecCredential with ``spec.interactive: false``, and the
cluster when ``provideClusterInfo``), its ``env`` entries, and no standard input; it must print an
ExecCredential whose ``status`` holds a token or a client certificate and key. Every way this fails
is a named error (not installed, failed, no answer, not an ExecCredential, needs a terminal), and the
credentials it prints are remembered for redaction before anything else sees them.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path

from drawb.redact import remember
from drawb.cluster.kube.failures import (
    ExecCredentialInvalid,
    ExecPluginFailed,
    ExecPluginInteractive,
    ExecPluginNotFound,
    KubeconfigUnusable,
)

API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
TIMEOUT_S = 60  # a plugin that cannot log in without a terminal would otherwise wait forever
_STDERR_CHARS = 600


def run_exec_plugin(config: dict, *, user: str, base_dir: str | None = None, cluster: dict | None = None) -> dict:
    """Run the exec plugin ``config`` of kubeconfig user ``user``; its ExecCredential's ``status``.

    ``base_dir`` is the kubeconfig's directory (a command with a ``/`` is relative to it); ``cluster``
    is the context's cluster entry, passed to the plugin when it asks (``provideClusterInfo``).
    """
    command, api_version = config.get("command"), config.get("apiVersion")
    who = f"the exec plugin {command!r} of kubeconfig user {user!r}"
    if not command or api_version not in API_VERSIONS:
        raise KubeconfigUnusable(f"kubeconfig user {user!r}: exec needs a command and an apiVersion of "
                                 f"{' or '.join(API_VERSIONS)} (it has command {command!r}, apiVersion {api_version!r})")
    mode = config.get("interactiveMode") or ("IfAvailable" if api_version.endswith("v1beta1") else None)
    if mode is None:
        raise KubeconfigUnusable(f"kubeconfig user {user!r}: exec of {api_version} needs interactiveMode "
                                 "(Never, IfAvailable or Always)", hint="add interactiveMode: Never to the user's exec")
    if mode == "Always":
        raise ExecPluginInteractive(
            f"{who} needs a terminal (interactiveMode: Always); drawb runs exec plugins without one, in notebooks too",
            hint="log in once in a terminal with the provider's command (or `kubectl get ns`, which runs the plugin) "
                 "so the plugin caches its credentials, and set interactiveMode: IfAvailable if it can then run "
                 "without asking")
    program = _resolve(command, base_dir)
    if program is None:
        place = "on PATH" if "/" not in command else "at that path"
        hint = (config.get("installHint") or "").strip() or \
            f"install it, or correct users[{user}].user.exec.command in the kubeconfig"
        raise ExecPluginNotFound(f"{who} is not installed {place}", hint=hint)
    info = {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    if config.get("provideClusterInfo") and cluster is not None:
        info["spec"]["cluster"] = _cluster_info(cluster, base_dir)
    env = {**os.environ, **{e["name"]: e["value"] for e in config.get("env") or []},
           "KUBERNETES_EXEC_INFO": json.dumps(info)}
    try:
        done = subprocess.run([program, *(config.get("args") or [])], env=env, cwd=base_dir or None,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ExecPluginFailed(f"{who} gave no answer within {TIMEOUT_S} s",
                               hint="a plugin that waits for a login cannot finish without a terminal: log in once "
                                    "in a terminal so it caches its credentials") from None
    except OSError as exc:
        raise ExecPluginFailed(f"{who} could not be started: {exc.strerror or exc}",
                               hint=f"check that {program} is an executable program") from None
    if done.returncode != 0:
        stderr = done.stderr.decode(errors="replace").strip()
        said = f": {stderr[-_STDERR_CHARS:]}" if stderr else " and wrote nothing to stderr"
        raise ExecPluginFailed(f"{who} exited with status {done.returncode}{said}",
                               hint="run the same command in a terminal to see what it needs (a login, a "
                                    "network, a setting)")
    status = _status(done.stdout, api_version, who)
    remember(status.get("token"), status.get("clientKeyData"))
    return status


def _resolve(command: str, base_dir: str | None) -> str | None:
    """The program to run: a bare name from PATH, a path with ``/`` relative to the kubeconfig's directory."""
    if "/" not in command:
        return shutil.which(command)
    path = Path(command).expanduser()
    if not path.is_absolute() and base_dir:
        path = Path(base_dir) / path
    return str(path) if path.is_file() else None


def _status(stdout: bytes, api_version: str, who: str) -> dict:
    """The ``status`` of the ExecCredential a plugin printed, checked as kubectl checks it (never quoting it)."""
    if not stdout.strip():
        raise ExecCredentialInvalid(f"{who} printed nothing on stdout, where an ExecCredential was expected",
                                    hint="the plugin must print an ExecCredential object as JSON on stdout")
    try:
        credential = json.loads(stdout)
    except ValueError as exc:
        raise ExecCredentialInvalid(
            f"{who} printed {len(stdout)} bytes that are not an ExecCredential (not JSON: {exc})",
            hint="the plugin must print an ExecCredential object as JSON on stdout, and its messages on stderr") from None
    if not isinstance(credential, dict) or credential.get("kind") != "ExecCredential":
        kind = credential.get("kind") if isinstance(credential, dict) else type(credential).__name__
        raise ExecCredentialInvalid(f"{who} printed JSON that is not an ExecCredential (kind {kind!r})",
                                    hint="the plugin must print kind: ExecCredential")
    if credential.get("apiVersion") != api_version:
        raise ExecCredentialInvalid(
            f"{who} answered with apiVersion {credential.get('apiVersion')!r}; the kubeconfig asks for {api_version!r}",
            hint="make the kubeconfig's exec apiVersion the one the plugin speaks")
    status = credential.get("status")
    if not isinstance(status, dict):
        raise ExecCredentialInvalid(f"{who} printed an ExecCredential without a status",
                                    hint="the status must hold a token, or clientCertificateData and clientKeyData")
    if not status.get("token") and not (status.get("clientCertificateData") and status.get("clientKeyData")):
        raise ExecCredentialInvalid(
            f"{who} printed an ExecCredential whose status has neither a token nor clientCertificateData "
            "with clientKeyData", hint="the status must hold a token, or a client certificate and its key")
    return status


def _cluster_info(cluster: dict, base_dir: str | None) -> dict:
    """The cluster as an ExecCredential's ``spec.cluster`` (the CA file read into certificate-authority-data)."""
    info = {key: cluster[key] for key in ("server", "tls-server-name", "insecure-skip-tls-verify", "proxy-url",
                                          "certificate-authority-data") if key in cluster}
    ca = cluster.get("certificate-authority")
    if ca and "certificate-authority-data" not in info:
        path = Path(ca) if Path(ca).is_absolute() or not base_dir else Path(base_dir) / ca
        try:
            info["certificate-authority-data"] = base64.b64encode(path.read_bytes()).decode()
        except OSError:
            pass
    for extension in cluster.get("extensions") or []:
        if extension.get("name") == "client.authentication.k8s.io/exec":
            info["config"] = extension.get("extension")
    return info
