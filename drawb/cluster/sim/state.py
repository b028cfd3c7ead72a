"""The simulated cluster kept in a file between commands, as kind and minikube keep theirs.

Each simulated cluster (scenario, Kubernetes version, feature gates) has one state file under
``$XDG_STATE_HOME/drawb/clusters`` (else ``~/.local/state/drawb/clusters``). A command that uses it
takes the file's lock (``flock`` on a ``.lock`` file beside it) before reading and keeps it until it has
written the cluster back, so two commands at once take turns: neither loses the other's changes. A
file is written to a temporary file in the same folder and renamed over the old one, so whoever reads
it (``state load``) sees a whole cluster, the old or the new.

The file holds the whole simulated cluster, store and control plane (the kubelets' runs, pod logs, the
timed steps still to come), pickled: the one format that reads a 10,000-node cluster back within the
command line's start budget. A pickle can run code when read, so every file carries a keyed hash
(BLAKE2b) under a key only this user can read (``state.key``, mode 0600): drawb reads only files
written by this user's drawb on this machine. The header also names the drawb build that wrote it
(its version and a stamp of its source files); another build's file is refused, never half-read.

Simulated time goes on with wall time between commands: a pod applied at 12:00:00 whose command runs
30 s has Succeeded when a command looks at 12:00:31 (the cluster does, on reading, every timed step
that came due meanwhile, each at its own time).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import pickle
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from drawb import release
from drawb.atomicfile import write_atomic
from drawb.cluster.sim.tree import loading_kept
from drawb.cluster.state_folder import STATE_HOME_ENV, state_dir
from drawb.errors import PROG, DrawbError

MAGIC = b"drawb simulated cluster state\n"
FORMAT_VERSION = 1
_MAC_BYTES = 32
_WAIT_NOTE_SECONDS = 1.0


class StateError(DrawbError):
    """A state file drawb cannot use."""


class NotAStateFile(StateError):
    """The file is no drawb state file, or it was cut short."""

    hint = f"name a file written by `{PROG} state save FILE`; to share a cluster, use `{PROG} snapshot save`"


class StateFromElsewhere(StateError):
    """The file was written by another user or on another machine: its keyed hash does not match."""

    hint = (f"drawb reads only the state files it wrote for you on this machine; to share a cluster, use "
            f"`{PROG} snapshot save FILE` there and `{PROG} connect --snapshot FILE` here")


class StateFromAnotherBuild(StateError):
    """The file was written by another build of drawb, whose simulated cluster may differ from this one's."""


@dataclass(frozen=True)
class StateKey:
    """Which simulated cluster: a scenario (or a replayed snapshot) at a Kubernetes version with gates."""

    scenario: str  # a scenario name, or the absolute path of a scenario file
    snapshot: str | None = None  # the absolute path of a replayed snapshot file
    kubernetes_version: str | None = None
    feature_gates: tuple[tuple[str, bool], ...] = ()
    file_stamp: str = ""  # size and modification time of the scenario or snapshot file, when one is named

    def file_name(self) -> str:
        """The state file's name: readable words, then a digest of the whole key."""
        words = [Path(self.snapshot).stem if self.snapshot else Path(self.scenario).stem]
        words += [self.kubernetes_version or "", *(f"{g}-{'on' if on else 'off'}" for g, on in self.feature_gates)]
        slug = re.sub(r"[^A-Za-z0-9.]+", "-", "-".join(w for w in words if w)).strip("-")[:80]
        digest = hashlib.blake2b(json.dumps(asdict(self)).encode(), digest_size=6).hexdigest()
        return f"{slug}-{digest}.state"

    def options(self, prog: str = PROG) -> str:
        """The global options that select this cluster on the command line."""
        parts = [f"--snapshot {self.snapshot}"] if self.snapshot else (
            [] if self.scenario == "default" else [f"--scenario {self.scenario}"])
        if self.kubernetes_version:
            parts.append(f"--kubernetes-version {self.kubernetes_version}")
        if self.feature_gates:
            parts.append("--feature-gates " + ",".join(f"{g}={str(on).lower()}" for g, on in self.feature_gates))
        return " ".join(parts)


def key_for(scenario: str, snapshot: str | None, kubernetes_version: str | None,
            feature_gates: Mapping[str, bool] | None) -> StateKey:
    """The key of the simulated cluster a connect with these options makes (files named by absolute path)."""
    named = snapshot or (scenario if scenario.endswith((".yaml", ".yml")) else None)
    stamp = ""
    if named:
        try:
            info = os.stat(named)
            stamp = f"{info.st_size}:{info.st_mtime_ns}"
        except OSError:
            stamp = "missing"  # connecting says what is wrong with the file
    return StateKey(
        scenario=os.path.abspath(scenario) if scenario.endswith((".yaml", ".yml")) and not snapshot else scenario,
        snapshot=os.path.abspath(snapshot) if snapshot else None,
        kubernetes_version=kubernetes_version or None,
        feature_gates=tuple(sorted((feature_gates or {}).items())),
        file_stamp=stamp,
    )


def key_of(cluster) -> StateKey:
    """The key a SimCluster is kept under: the one it was connected with, else its scenario's name."""
    return getattr(cluster, "state_key", None) or StateKey(cluster.scenario.name)


def clusters_dir() -> Path:
    """The folder of the kept simulated clusters."""
    return state_dir() / "clusters"


def build_stamp() -> str:
    """This drawb's build: its version and a digest of its source files' names, sizes and modification times."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.blake2b(digest_size=8)
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(folder, name))
                digest.update(f"{os.path.relpath(folder, root)}/{name}:{info.st_size}:{info.st_mtime_ns}\n".encode())
    return f"{release.VERSION}+{digest.hexdigest()}"


def _mac_key() -> bytes:
    """This user's key for the state files' hashes, made on first use (readable by this user only)."""
    path = state_dir() / "state.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise StateError(f"cannot read drawb's key for state files, {path}: {exc.strerror}") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle, temporary = tempfile.mkstemp(prefix=".state.key.", dir=path.parent)  # mode 0600
    except OSError as exc:
        raise StateError(f"cannot make drawb's key for state files in {path.parent}: {exc.strerror}",
                         hint=f"set ${STATE_HOME_ENV} to a folder you can write to") from None
    try:
        os.write(handle, os.urandom(32))
        os.close(handle)
        try:
            os.link(temporary, path)  # the first command to get here makes it; the others read it
        except FileExistsError:
            pass
    finally:
        os.unlink(temporary)
    return path.read_bytes()


def _mac(key: bytes, header: bytes, payload: bytes | memoryview) -> bytes:
    digest = hashlib.blake2b(key=key, digest_size=_MAC_BYTES)
    digest.update(header)
    digest.update(payload)
    return digest.digest()


@dataclass(frozen=True)
class Header:
    """What a state file says about itself, readable without loading the cluster."""

    format_version: int
    build: str
    python: str
    key: StateKey
    saved: str  # RFC 3339
    description: str
    objects: int


def write(cluster, key: StateKey | None, path: str | os.PathLike) -> Header:
    """Write ``cluster`` (a SimCluster) to ``path`` as the state of ``key`` (default: ``key_of``), whole or not
    at all."""
    target = Path(path)
    header = Header(FORMAT_VERSION, build_stamp(), _python(), key or key_of(cluster),
                    datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), cluster.description, len(cluster._objects))
    head = json.dumps(asdict(header)).encode() + b"\n"
    payload = pickle.dumps(cluster, protocol=5)
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(target, MAGIC + head + _mac(_mac_key(), head, payload) + payload)
    except OSError as exc:
        raise StateError(f"cannot write the simulated cluster's state to {path}: {exc.strerror}",
                         hint="name a file in a folder you can write to") from None
    return header


def read_header(path: str | os.PathLike) -> tuple[Header, bytes, memoryview]:
    """The header of the state file at ``path``, the header's bytes and the payload (not yet checked)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise StateError(f"cannot read the simulated cluster's state {path}: {exc.strerror}",
                         hint=f"check the path (`{PROG} state save FILE` writes one)") from None
    end = data.find(b"\n", len(MAGIC))
    if not data.startswith(MAGIC) or end < 0:
        raise NotAStateFile(f"{path} is not a drawb state file (it does not begin with drawb's mark)")
    head = data[len(MAGIC): end + 1]
    try:
        fields = json.loads(head)
        fields["key"] = StateKey(**{**fields["key"], "feature_gates": tuple(map(tuple, fields["key"]["feature_gates"]))})
        header = Header(**fields)
    except (ValueError, TypeError, KeyError):
        raise NotAStateFile(f"{path} is not a drawb state file of format {FORMAT_VERSION}: its header is unreadable") from None
    return header, head, memoryview(data)[end + 1:]


def read(path: str | os.PathLike):
    """The SimCluster in the state file at ``path``, or a StateError saying why drawb will not read it."""
    header, head, rest = read_header(path)
    mac, payload = bytes(rest[:_MAC_BYTES]), rest[_MAC_BYTES:]
    if not hmac.compare_digest(_mac(_mac_key(), head, payload), mac):
        raise StateFromElsewhere(f"{path} was not written by your drawb on this machine, or was changed or cut "
                                 "short since: drawb will not read it")
    if header.format_version != FORMAT_VERSION or header.build != build_stamp() or header.python != _python():
        raise StateFromAnotherBuild(
            f"{path} was written by another build of drawb ({header.build}, Python {header.python}); this is "
            f"{build_stamp()} on Python {_python()}, whose simulated cluster may differ",
            hint=f"start it afresh: `{PROG} connect --reset{' ' + header.key.options() if header.key.options() else ''}`")
    with loading_kept():  # a load cut short leaves the stored objects read-only all the same
        return pickle.loads(payload)  # it catches up with the time that passed when it is next read


def _python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


class KeptState:
    """The state file of one simulated cluster, and its lock while a command uses it."""

    def __init__(self, key: StateKey):
        self.key = key
        self.path = clusters_dir() / key.file_name()
        self.lock_path = self.path.with_suffix(".lock")
        self._lock: int | None = None

    def acquire(self, progress: Callable[[str], None] | None = None) -> None:
        """Take the lock, waiting (and saying for whom, after a second) while another command holds it."""
        import fcntl  # POSIX: imported where the lock is taken, so that a notebook elsewhere needs none

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StateError(f"cannot keep the simulated cluster in {self.path.parent}: {exc.strerror}",
                             hint=f"set ${STATE_HOME_ENV} to a folder you can write to") from None
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._wait(handle, progress)
            os.ftruncate(handle, 0)
            os.pwrite(handle, " ".join([str(os.getpid()), "drawb", *sys.argv[1:]]).encode(), 0)
        except BaseException:
            os.close(handle)
            raise
        self._lock = handle

    def _wait(self, handle: int, progress: Callable[[str], None] | None) -> None:
        import fcntl

        deadline = time.monotonic() + _WAIT_NOTE_SECONDS
        while time.monotonic() < deadline:
            time.sleep(0.02)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
        if progress is not None:
            holder = os.pread(handle, 400, 0).decode(errors="replace").split(" ", 1)
            who = f"`{holder[1]}` (pid {holder[0]})" if len(holder) == 2 else f"pid {holder[0] or 'unknown'}"
            progress(f"Waiting for {who} to finish with the simulated cluster kept in {self.path} ...")
        fcntl.flock(handle, fcntl.LOCK_EX)

    def load(self):
        """The kept cluster, or None when there is none yet."""
        if not self.path.exists():
            return None
        return read(self.path)

    def save(self, cluster) -> Header:
        """Keep ``cluster`` (the lock held)."""
        return write(cluster, self.key, self.path)

    def remove(self) -> bool:
        """Forget the kept cluster (the lock held); whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def release(self) -> None:
        """Let the next command have it."""
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the flock
            self._lock = None
