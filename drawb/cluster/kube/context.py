"""The kubeconfig context a real cluster is reached through, read as kubectl reads it (the files of
``$KUBECONFIG`` merged, the first entry of a name winning): its name, namespace and user, and what kind
of credential that user holds. Names only: no secret is read into it."""

from __future__ import annotations

import os
from dataclasses import dataclass

import yaml
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.kube_config import ConfigNode, KubeConfigMerger

from drawb.cluster.kubeconfig_file import kubeconfig_source


@dataclass(frozen=True)
class KubeContext:
    """One context of a kubeconfig."""

    name: str
    user: str
    namespace: str | None  # None: the context names none (commands use ``default``, as kubectl)
    credential: str  # exec, token, tokenFile, client-certificate, auth-provider, basic, or none
    files: str  # the kubeconfig file(s) it came from
    command: str | None = None  # the exec plugin's command, or the auth provider's name

    def describe(self) -> str:
        """``user 'u' of context 'c' (kubeconfig F)``."""
        return f"user '{self.user}' of context '{self.name}' (kubeconfig {self.files})"

    def refresh_hint(self) -> str:
        """How to get a credential the server accepts again, for this kind of credential."""
        check = f"`kubectl --context {self.name} auth whoami` shows whether the server accepts it"
        if self.credential == "exec":
            return (f"the exec plugin `{self.command}` supplies the token, so sign in again with the tool it belongs "
                    f"to (run `{self.command}` to see its own message), then retry; {check}")
        if self.credential == "auth-provider":
            return f"the token of the '{self.command}' auth provider has expired; sign in again with it, then retry; {check}"
        if self.credential == "token":
            return (f"the token of user '{self.user}' has expired or was revoked: get a new one (for a ServiceAccount: "
                    f"`kubectl create token NAME -n NAMESPACE`) and store it with "
                    f"`kubectl config set-credentials {self.user} --token=NEW_TOKEN`; {check}")
        if self.credential == "tokenFile":
            return f"the token file of user '{self.user}' holds a token the server refuses: refresh the file; {check}"
        if self.credential == "client-certificate":
            return (f"the client certificate of user '{self.user}' has expired or is not signed by a CA the server "
                    f"trusts: get a new one from the cluster's admin (`openssl x509 -noout -enddate` shows its expiry); "
                    f"{check}")
        if self.credential == "basic":
            return f"the server refuses the username and password of user '{self.user}': update them in the kubeconfig"
        return (f"user '{self.user}' holds no credential and the server wants one: add one with "
                f"`kubectl config set-credentials {self.user} ...`")


def read_context(kubeconfig: str | None = None, context: str | None = None) -> KubeContext | None:
    """The ``context`` (default: the current one) of ``kubeconfig`` (default: ``$KUBECONFIG``, else
    ``~/.kube/config``); None when there is no such file or context (the client's loader says why)."""
    files = kubeconfig_source(kubeconfig)
    try:
        merger = KubeConfigMerger(files)
    except (OSError, ValueError, yaml.YAMLError, ConfigException):  # connecting names what is wrong
        return None
    if merger.config is None or not isinstance(merger.config.value, dict):
        return None
    config = merger.config.value
    # kubectl takes the first file's current-context (the client's merger keeps the last one's)
    name = context or next((c["current-context"] for c in merger.config_files.values()
                            if isinstance(c, dict) and c.get("current-context")), None)
    entry = _named(config.get("contexts"), name)
    if entry is None:
        return None
    settings = entry.get("context") or {}
    user_name = settings.get("user") or ""
    user = (_named(config.get("users"), user_name) or {}).get("user") or {}
    credential, command = _credential(user)
    return KubeContext(name=name, user=user_name, namespace=settings.get("namespace") or None, credential=credential,
                       files=", ".join(os.path.expanduser(f) for f in files.split(os.pathsep) if f), command=command)


def _named(entries: object, name: str | None) -> dict | None:
    for entry in entries if isinstance(entries, list) else ():
        value = entry.value if isinstance(entry, ConfigNode) else entry
        if isinstance(value, dict) and value.get("name") == name:
            return value
    return None


def _credential(user: dict) -> tuple[str, str | None]:
    if user.get("exec"):
        return "exec", (user["exec"] or {}).get("command")
    if user.get("auth-provider"):
        return "auth-provider", (user["auth-provider"] or {}).get("name")
    for key, kind in (("token", "token"), ("tokenFile", "tokenFile"), ("client-certificate", "client-certificate"),
                      ("client-certificate-data", "client-certificate"), ("username", "basic")):
        if user.get(key):
            return kind, None
    return "none", None
