"""A bearer token kept in a file (a kubeconfig's ``tokenFile``, a pod's service account token), read again
whenever the file changes: the kubelet rotates a pod's token by swapping the file."""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes.client import Configuration

from drawb.redact import remember
from drawb.cluster.kube.failures import CredentialsFailed


class TokenFile:
    """The token in ``path``; ``what`` names the file in messages ("the kubeconfig user's tokenFile")."""

    def __init__(self, path: str | Path, what: str):
        self.path, self.what = Path(path), what
        self._seen: tuple | None = None
        self._token = ""

    def token(self) -> str:
        """The file's token, read again when its inode, size or modification time changed since the last read."""
        try:
            stat = os.stat(self.path)  # follows the kubelet's ..data symlink to the current file
            seen = (stat.st_ino, stat.st_size, stat.st_mtime_ns)
            if seen != self._seen:
                token = self.path.read_text(errors="replace").strip()
                if not token:
                    raise CredentialsFailed(f"{self.what} {self.path} is empty",
                                            hint="write the token into it, or point the setting at the right file")
                remember(token)
                self._token, self._seen = token, seen
        except OSError as exc:
            raise CredentialsFailed(f"{self.what} {self.path} cannot be read: {exc.strerror or exc}",
                                    hint="check the path and its permissions") from None
        return self._token

    def install(self, configuration: Configuration) -> None:
        """Send this file's current token with every request ``configuration`` makes."""
        configuration.api_key["BearerToken"] = "Bearer " + self.token()

        def refresh(config: Configuration) -> None:
            config.api_key["BearerToken"] = "Bearer " + self.token()

        configuration.refresh_api_key_hook = refresh
