"""A kubeconfig read as kubectl reads it, into the official client's Configuration.

The client's loader reads the file (merging ``$KUBECONFIG``'s list, relative paths, proxy-url,
tls-server-name, client certificates); drawb replaces two of its parts: exec plugins run through
``exec_plugin`` (named errors instead of the loader's log lines), and a ``tokenFile`` is read again
when it changes. Every secret ends up remembered for redaction, also one a later refresh brings.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import urllib3
from kubernetes.client import Configuration
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.kube_config import FileOrData, KubeConfigLoader, KubeConfigMerger

from drawb.redact import guard_logging, remember
from drawb.cluster.kube.exec_plugin import run_exec_plugin
from drawb.cluster.kube.failures import CredentialsFailed, KubeconfigUnusable, Origin
from drawb.cluster.kube.token_file import TokenFile
from drawb.cluster.kubeconfig_file import current_context, kubeconfig_source


def kubeconfig_configuration(kubeconfig: str | None = None, context: str | None = None) -> Configuration:
    """The client's Configuration for ``context`` (default: the current one) of the kubeconfig."""
    where = kubeconfig_source(kubeconfig)
    guard_logging()
    try:
        merged = KubeConfigMerger(where).config
        if merged is None:
            raise KubeconfigUnusable(f"no kubeconfig at {where}")
        context = context or current_context(kubeconfig)  # kubectl's rule: the first file that sets it
        _check_context(merged, context, where)
        loader = _Loader(config_dict=merged, active_context=context, config_base_path=None)
        configuration = Configuration()
        loader.load_and_set(configuration)
    except (ConfigException, OSError) as exc:
        raise KubeconfigUnusable(f"the kubeconfig {where} cannot be used: {_reason(exc)}") from None
    if loader.token_file is not None:
        loader.token_file.install(configuration)
    _check_files(configuration)
    configuration.drawb_origin = loader.origin()
    settle(configuration)
    return configuration


def settle(configuration: Configuration) -> None:
    """drawb's settings on top of any Configuration: no retries (a refused connection fails at once), no
    library warning for a cluster whose kubeconfig turns TLS verification off, every secret remembered."""
    configuration.retries = False
    if not configuration.verify_ssl:
        warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
    remember_credentials(configuration)


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


class _Loader(KubeConfigLoader):
    """The client's kubeconfig loader with drawb's exec plugin runner and a tokenFile read again when it changes."""

    token_file: TokenFile | None = None

    def _user_name(self) -> str:
        return str(self._current_context["context"].safe_get("user") or "")

    def _load_from_exec_plugin(self):
        if "exec" not in self._user:
            return None
        base_dir = self._get_base_path(self._user.path)
        status = run_exec_plugin(self._user["exec"].value, user=self._user_name(), base_dir=base_dir,
                                 cluster=self._cluster.value)
        if status.get("token"):
            self.token = "Bearer " + status["token"]
        else:
            for data_key, attribute in (("clientCertificateData", "cert_file"), ("clientKeyData", "key_file")):
                setattr(self, attribute, FileOrData(status, None, data_key_name=data_key, file_base_path=base_dir,
                                                    base64_file_content=False,
                                                    temp_file_path=self._temp_file_path).as_file())
        if status.get("expirationTimestamp"):
            from kubernetes.config.dateutil import parse_rfc3339

            self.expiry = parse_rfc3339(status["expirationTimestamp"])
        return True

    def _load_user_token(self):
        if "token" in self._user or "tokenFile" not in self._user:
            return super()._load_user_token()
        path = Path(self._get_base_path(self._user.path)) / Path(self._user["tokenFile"]).expanduser()
        self.token_file = TokenFile(path, f"the tokenFile of kubeconfig user {self._user_name()!r}")
        self.token = "Bearer " + self.token_file.token()
        return True

    def origin(self) -> Origin:
        """Where this context's CA comes from, in words (its credentials are named by its KubeContext)."""
        cluster = self._cluster
        if "certificate-authority" in cluster:
            return Origin(ca=f"the kubeconfig's certificate-authority ({self._resolve(cluster, 'certificate-authority')})")
        if "certificate-authority-data" in cluster:
            return Origin(ca="the kubeconfig's certificate-authority-data (cluster of context "
                             f"{self.current_context['name']!r})")
        return Origin()

    def _resolve(self, node, key: str) -> str:
        path = Path(node[key]).expanduser()
        return str(path if path.is_absolute() else Path(self._get_base_path(node.path)) / path)


def _check_context(merged, wanted: str | None, where: str) -> None:
    names = [c["name"] for c in merged.safe_get("contexts") or [] if "name" in c]
    if not wanted:
        raise KubeconfigUnusable(f"the kubeconfig {where} has no current-context, and no context was named",
                                 hint="name one with --context NAME (its contexts: " + (", ".join(names) or "none") + ")")
    if wanted not in names:
        raise KubeconfigUnusable(f"the kubeconfig {where} has no context {wanted!r}; its contexts: "
                                 + (", ".join(names) or "none"), hint="name one of them with --context NAME")


def _check_files(configuration: Configuration) -> None:
    """A CA, certificate or key file the kubeconfig names and that is missing is named now, not as a TLS error."""
    for attribute, what in (("ssl_ca_cert", "certificate-authority"), ("cert_file", "client-certificate"),
                            ("key_file", "client-key")):
        path = getattr(configuration, attribute)
        if path and not Path(path).is_file():
            raise CredentialsFailed(f"the kubeconfig's {what} {path} does not exist",
                                    hint=f"correct {what} in the kubeconfig, or put the file there")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc).rstrip(".")
