"""The one place where what the HTTP stack, TLS and the official client raise becomes a named drawb error.

``from_exception`` reads a foreign exception (urllib3, ssl, the client's ApiException for TLS, a
kubeconfig the client cannot load) and ``from_status`` an API server's error answer. Each error
says what failed, where (the server, the kubeconfig's certificate-authority, the proxy) and how to fix
it; nothing of the libraries' wording or logging reaches the user unexplained.
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass

import orjson
import urllib3.exceptions
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from drawb.cluster.protocol import ClusterError, NotConnected, Unauthorized
from drawb.cluster.refusal import rbac_refusal
from drawb.errors import PROG, DrawbError

_REACH = "check that the cluster is running and that this machine reaches that address (the server in the " \
         "kubeconfig, VPN, proxy settings, firewall)"


@dataclass(frozen=True)
class Origin:
    """Where a connection's CA and credentials come from, in words for messages (a Configuration's ``drawb_origin``)."""

    ca: str = ""  # "the kubeconfig's certificate-authority (/path)"; empty: the system's trusted CAs
    credentials: str = ""  # "the token of service account team-a/notebook" (a kubeconfig's: its KubeContext)


def origin_of(configuration: Configuration) -> Origin:
    """The Origin drawb recorded on ``configuration`` (an empty one for a Configuration made elsewhere)."""
    return getattr(configuration, "drawb_origin", None) or Origin()


class KubeconfigUnusable(NotConnected):
    """A kubeconfig that cannot be used as it is: missing, no such context, an incomplete entry."""

    hint = f"pass --kubeconfig PATH, or use the simulated cluster: `{PROG} connect --simulated`"


class CredentialsFailed(NotConnected):
    """drawb could not get the credentials a kubeconfig's user names (a token file, a client certificate)."""


class ExecPluginNotFound(CredentialsFailed):
    """A kubeconfig user's exec credential plugin is not installed where the kubeconfig says."""


class ExecPluginFailed(CredentialsFailed):
    """A kubeconfig user's exec credential plugin ran and failed (its exit status and stderr)."""


class ExecCredentialInvalid(CredentialsFailed):
    """An exec credential plugin printed something that is not a usable ExecCredential."""


class ExecPluginInteractive(CredentialsFailed):
    """An exec credential plugin that needs a terminal (``interactiveMode: Always``); drawb runs plugins without one."""


class ConnectionRefused(NotConnected):
    """Nothing listens at the API server's address and port."""


class HostNotFound(NotConnected):
    """The API server's host name does not resolve."""


class TlsVerifyFailed(NotConnected):
    """The API server's certificate is not trusted: another CA, another host name, expired."""

    title = "TLSVerifyFailed"


class TlsFailed(NotConnected):
    """The TLS handshake with the API server failed for another reason (not TLS, a refused client certificate)."""

    title = "TLSFailed"


class ProxyFailed(NotConnected):
    """The proxy between drawb and the API server (the cluster's ``proxy-url``) failed."""


class ServerTimedOut(NotConnected):
    """The API server did not answer within a timeout: the connect one (TCP and TLS) or the read one."""


def from_exception(exc: BaseException, client: ApiClient,
                   timeout: tuple[float | None, float | None] = (None, None)) -> DrawbError:
    """The drawb error for ``exc``, raised while ``client`` talked to its server with ``timeout`` (connect, read)."""
    if isinstance(exc, DrawbError):
        return exc
    if isinstance(exc, ConfigException):
        return KubeconfigUnusable(f"the kubeconfig cannot be used: {str(exc).rstrip('.')}")
    if isinstance(exc, ApiException) and exc.status:
        return from_status(exc.status, exc.body, exc.reason, client)
    configuration = client.configuration
    host = configuration.host
    cause = _root_cause(exc)
    if isinstance(cause, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(cause):
        return _tls_verify_failed(cause, configuration)
    # urllib3's NewConnectionError (a refused connection among others) derives from its ConnectTimeoutError
    if isinstance(exc, urllib3.exceptions.TimeoutError) and not isinstance(exc, urllib3.exceptions.NewConnectionError):
        return _timed_out(exc, host, timeout)
    if isinstance(exc, ApiException) or isinstance(cause, ssl.SSLError):  # the client raises TLS failures as status 0
        return _tls_failed(cause, configuration)
    if isinstance(exc, urllib3.exceptions.ProxyError) or _through_proxy(exc):
        return ProxyFailed(f"the proxy {configuration.proxy} (the cluster's proxy-url) failed on the way to {host}: "
                           f"{failure_words(cause)}", hint="check the proxy-url of the kubeconfig's cluster and that the "
                                                           "proxy is running and reaches the API server")
    if isinstance(cause, ConnectionRefusedError):
        return ConnectionRefused(f"nothing listens at {host}: the connection was refused",
                                 hint="check that the API server runs there and that the kubeconfig's server names "
                                      "its address and port")
    if isinstance(exc, urllib3.exceptions.NameResolutionError) or "Name or service not known" in str(cause):
        return HostNotFound(f"the API server's host name in {host} does not resolve", hint=_REACH)
    return NotConnected(f"cannot reach the API server at {host}: {failure_words(cause)}", hint=_REACH)


def _timed_out(exc: BaseException, host: str, timeout: tuple[float | None, float | None]) -> ServerTimedOut:
    # urllib3 reports a TLS handshake past the connect timeout as a read timeout
    connecting = isinstance(exc, urllib3.exceptions.ConnectTimeoutError) or "handshake" in failure_words(exc)
    phase, seconds = ("connect (TCP and TLS)", timeout[0]) if connecting else ("read", timeout[1])
    limit = f"the {phase} timeout of {seconds:g} s" if seconds else f"its {phase} timeout"
    return ServerTimedOut(
        f"cannot reach the API server at {host}: no answer within {limit}",
        hint="a server that accepts and stays silent is stopped, overloaded or not an API server (`kubectl get "
             "--raw /readyz` asks it); on a slow link raise the limit: --connect-timeout / --read-timeout, or "
             "%config DRAMagics.connect_timeout / read_timeout")


def from_status(status: int | None, body: bytes | str | None, reason: str | None,
                client: ApiClient | None = None) -> ClusterError:
    """The drawb error for an API server's error answer (its Status body read for the message and reason)."""
    message, why = reason or "error", reason
    try:
        payload = orjson.loads(body) if body else {}
        message = payload.get("message") or message
        why = payload.get("reason") or why
    except orjson.JSONDecodeError:
        pass
    if status == 401 and client is not None:
        return _unauthorized(client, message)
    if status == 403:
        refused = rbac_refusal(message)
        if refused is not None:
            return refused
    return ClusterError(f"{message} (HTTP {status})", status=status, reason=why, server_message=message)


def _unauthorized(client: ApiClient, message: str) -> Unauthorized:
    context = getattr(client, "kube_context", None)
    credentials = origin_of(client.configuration).credentials
    if context is not None:
        whose, hint = f"the credentials of {context.describe()}", context.refresh_hint()
    elif credentials:
        whose, hint = credentials, ("a pod's token is refused when its ServiceAccount or the object it is bound to "
                                    "was deleted, or the pod outlived it: restart the notebook server")
    else:
        whose, hint = "the credentials of drawb's connection", \
            "check the credential drawb connects with (`kubectl auth whoami` shows whether the server accepts it)"
    return Unauthorized(f"the API server at {client.configuration.host} refused {whose}: {message} (HTTP 401)",
                        status=401, reason="Unauthorized", hint=hint, server_message=message)


def _tls_verify_failed(cause: BaseException, configuration: Configuration) -> TlsVerifyFailed:
    host, detail = configuration.host, failure_words(cause)
    ca = origin_of(configuration).ca
    if "Hostname mismatch" in detail or "IP address mismatch" in detail:
        name = configuration.tls_server_name or host
        return TlsVerifyFailed(f"the server's certificate at {host} is not valid for the name {name} ({detail})",
                               hint="use a server address the certificate names, or set tls-server-name on the "
                                    "kubeconfig's cluster to a name it does")
    if "expired" in detail:
        return TlsVerifyFailed(f"the server's certificate at {host} has expired ({detail})",
                               hint="the cluster's certificates need renewing (kubeadm certs renew, or the "
                                    "provider's rotation)")
    if ca:
        return TlsVerifyFailed(f"the server's certificate at {host} is not signed by {ca} ({detail})",
                               hint=f"{ca} is not the CA this server's certificate comes from: get the cluster's CA "
                                    "again (a recreated cluster has a new one), or check that the server address "
                                    "points at this cluster")
    return TlsVerifyFailed(f"the server's certificate at {host} is not signed by a certificate authority this machine "
                           f"trusts ({detail}), and the kubeconfig names none",
                           hint="add the cluster's CA to the kubeconfig's cluster (certificate-authority or "
                                "certificate-authority-data)")


def _tls_failed(cause: BaseException, configuration: Configuration) -> TlsFailed:
    host, detail = configuration.host, failure_words(cause)
    words = detail.lower().replace("_", " ")
    if "wrong version number" in words:
        return TlsFailed(f"the server at {host} does not speak TLS ({detail})",
                         hint="check the server address: its port may be a plain-HTTP one (http://) or another "
                              "service's")
    if any(word in words for word in ("key values mismatch", "pem lib", "no start line")):
        return TlsFailed(f"the client certificate and key of the kubeconfig's user do not load ({detail})",
                         hint="client-certificate and client-key must be a matching PEM pair")
    if any(word in words for word in ("bad certificate", "certificate required", "unknown ca")):
        return TlsFailed(f"the server at {host} refused the client certificate ({detail})",
                         hint="the kubeconfig user's client-certificate is not one this cluster trusts (another "
                              "cluster's, or expired): get new credentials for it")
    return TlsFailed(f"the TLS handshake with {host} failed: {detail}", hint=_REACH)


def _root_cause(exc: BaseException) -> BaseException:
    """The innermost reason: urllib3 wraps OS and TLS errors (``reason``, ``args``, ``__context__``)."""
    seen = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        inner = _root_cause_step(exc)
        if inner is None:
            return exc
        exc = inner
    return exc


def _root_cause_step(exc: BaseException) -> BaseException | None:
    """The reason one level inside ``exc`` (``reason``, an exception among ``args``, the cause or context)."""
    inner = getattr(exc, "reason", None)
    if not isinstance(inner, BaseException):
        inner = next((a for a in getattr(exc, "args", ()) if isinstance(a, BaseException)), None)
    return inner if inner is not None else (exc.__cause__ or exc.__context__)


def _cut_mid_answer(exc: BaseException) -> bool:
    """Whether the answer stopped partway, on the way to the root: urllib3's InvalidChunkLength, IncompleteRead or
    'Response ended prematurely' (whose cause is the chunk length's parse error)."""
    while True:
        if isinstance(exc, (urllib3.exceptions.InvalidChunkLength, urllib3.exceptions.IncompleteRead)) or (
                isinstance(exc, urllib3.exceptions.ProtocolError) and "ended prematurely" in str(exc)):
            return True
        inner = _root_cause_step(exc)
        if inner is None:
            return False
        exc = inner


def _through_proxy(exc: BaseException) -> bool:
    return isinstance(getattr(exc, "reason", None), urllib3.exceptions.ProxyError)


def failure_words(exc: BaseException) -> str:
    """What went wrong on the connection, in the words of its innermost cause (``Connection refused``),
    without the HTTP stack's wrappers, class names, object reprs and source positions."""
    if _cut_mid_answer(exc):  # a chunk length cut short (a server killed mid-stream): Python's parse error
        return "the connection closed in the middle of an answer"
    exc = _root_cause(exc)
    if isinstance(exc, ssl.SSLError):
        text = getattr(exc, "verify_message", None) or exc.reason or str(exc)
        return str(text).replace("_", " ").lower() if str(text).isupper() else str(text)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc) or type(exc).__name__
    # urllib3 starts with the connection's repr, the ssl module with its source position
    return re.sub(r"^_ssl\.c:\d+: ", "", text.rsplit(">: ", 1)[-1].rsplit("): ", 1)[-1])
