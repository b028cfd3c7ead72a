"""Build the local control plane's binaries from Go modules, cached by the modules' hash.

The Go modules live in ``testcluster/`` (Kubernetes + etcd, pinned) and ``testcluster/kwok/``
(kwok + kwokctl). Binaries go to ``$DRAWB_CACHE/testcluster/<k8s version>/bin`` (``DRAWB_CACHE``
defaults to ``~/.cache/drawb``) with a key file; a build whose key matches returns at once.
Another Kubernetes version is built from a module generated in the cache from that version's own
``go.mod`` (its staging modules replaced by the matching ``v0.x.y`` tags); it takes etcd, kwok and
kwokctl, which no Kubernetes version pins, from the pinned version's build when that one is complete
(a hard link), so only the Kubernetes commands are compiled. Only the Go module proxy is used:
``direct`` is removed from ``GOPROXY`` and ``GOTOOLCHAIN=local``.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from drawb import versions

RECIPE = "drawb-testcluster-build/1"
K8S_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")
ETCD_PACKAGE = "go.etcd.io/etcd/server/v3"
KWOK_COMMANDS = ("kwok", "kwokctl")
SHARED = ("etcd", *KWOK_COMMANDS)  # not Kubernetes-versioned: another version takes the pinned build's
BINARIES = (*K8S_COMMANDS, *SHARED)
KEY_FILE = ".build-key"
ANCHOR = "allocbench"  # testcluster/allocbench: the Go allocator anchor of drawb's benchmarks


@dataclass
class BuildResult:
    """Where the binaries are and what building them cost."""

    bin_dir: Path
    k8s_version: str
    key: str
    cached: bool
    seconds: float
    peak_rss_mib: float | None

    def to_json(self) -> dict:
        """The result as a JSON-ready dict."""
        return {**asdict(self), "bin_dir": str(self.bin_dir)}


def source_dir() -> Path:
    """The ``testcluster/`` directory holding the pinned Go modules."""
    override = os.environ.get("DRAWB_TESTCLUSTER_SRC")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "testcluster"


def cache_root() -> Path:
    """``$DRAWB_CACHE`` or ``~/.cache/drawb``."""
    return Path(os.environ.get("DRAWB_CACHE") or Path.home() / ".cache" / "drawb")


def target_k8s_version() -> str:
    """The Kubernetes version the live tier builds and runs: ``$DRAWB_K8S_VERSION``, else ``testcluster/``'s pin."""
    return os.environ.get("DRAWB_K8S_VERSION") or pinned_k8s_version()


def pinned_k8s_version(module_dir: Path | None = None) -> str:
    """The ``k8s.io/kubernetes`` version required by a module's go.mod (default: the repo's)."""
    text = ((module_dir or source_dir()) / "go.mod").read_text()
    match = re.search(r"^\s*k8s\.io/kubernetes (v\S+)", text, re.MULTILINE)
    if not match:
        raise RuntimeError(f"{module_dir or source_dir()}/go.mod does not require k8s.io/kubernetes")
    return match.group(1)


def go_env() -> dict[str, str]:
    """Environment for every go command: static binaries, module proxy only, local toolchain."""
    env = dict(os.environ, CGO_ENABLED="0", GOTOOLCHAIN="local")
    proxy = subprocess.run(["go", "env", "GOPROXY"], capture_output=True, text=True, check=True).stdout
    proxies = [p for p in re.split(r"[,|]", proxy.strip()) if p and p not in ("direct", "off")]
    if not proxies:
        raise RuntimeError(f"GOPROXY={proxy.strip()!r} names no module proxy; set GOPROXY to one")
    env["GOPROXY"] = ",".join(proxies)
    return env


def _go(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["go", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise RuntimeError(f"go {' '.join(args)} failed in {cwd}:\n{proc.stderr.strip()}")
    return proc.stdout


def staging_modules(k8s_go_mod: str) -> list[str]:
    """Module paths k8s.io/kubernetes replaces with its ``staging/`` directories."""
    return sorted(set(re.findall(r"^\s*(k8s\.io/[\w.-]+) => \./staging/", k8s_go_mod, re.MULTILINE)))


def write_module(dest: Path, k8s_version: str) -> None:
    """Generate a consumer module building Kubernetes ``k8s_version`` and its matching etcd."""
    env = go_env()
    dest.mkdir(parents=True, exist_ok=True)
    info = json.loads(_go(["mod", "download", "-json", f"k8s.io/kubernetes@{k8s_version}"], dest, env))
    k8s_go_mod = Path(info["GoMod"]).read_text()
    go_line = re.search(r"^go (\S+)", k8s_go_mod, re.MULTILINE)
    godebug = re.search(r"^godebug (\S+)", k8s_go_mod, re.MULTILINE)
    etcd = re.search(r"^\s*go\.etcd\.io/etcd/client/v3 (v\S+)", k8s_go_mod, re.MULTILINE)
    if not (go_line and etcd):
        raise RuntimeError(f"k8s.io/kubernetes@{k8s_version} go.mod has no go line or etcd client")
    staging_version = "v0." + k8s_version.removeprefix("v1.")
    lines = [
        "// Builds the local DRA test control plane (python -m drawb.testing.build).",
        "// k8s.io/kubernetes requires its staging modules at the non-existent v0.0.0;",
        f"// they are replaced by the tags matching {k8s_version}.",
        "module drawb.local/testcluster",
        "",
        f"go {go_line.group(1)}",
        "",
    ]
    if godebug:
        lines += [f"godebug {godebug.group(1)}", ""]
    lines.append("replace (")
    lines += [f"\t{m} => {m} {staging_version}" for m in staging_modules(k8s_go_mod)]
    lines.append(")")
    (dest / "go.mod").write_text("\n".join(lines) + "\n")
    (dest / "go.sum").unlink(missing_ok=True)
    tools = [f"k8s.io/kubernetes/cmd/{c}@{k8s_version}" for c in K8S_COMMANDS]
    _go(["get", "-tool", *tools, f"{ETCD_PACKAGE}@{etcd.group(1)}"], dest, env)


def _ldflags(k8s_version: str) -> str:
    parsed = versions.parse(k8s_version)
    major, minor = str(parsed.major), str(parsed.minor)
    flags = ["-s", "-w"]
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X={pkg}.gitVersion={k8s_version}",
            f"-X={pkg}.gitMajor={major}",
            f"-X={pkg}.gitMinor={minor}",
            f"-X={pkg}.gitTreeState=clean",
        ]
    return " ".join(flags)


def _module_for(k8s_version: str, cache: Path) -> Path:
    src = source_dir()
    if k8s_version == pinned_k8s_version(src):
        return src
    module = cache / "module"
    if not (module / "go.sum").exists():
        write_module(module, k8s_version)
    return module


def _key(k8s_module: Path, kwok_module: Path, ldflags: str, go_version: str) -> str:
    digest = hashlib.sha256(f"{RECIPE}\n{go_version}\n{ldflags}\n".encode())
    for module in (k8s_module, kwok_module):
        for name in ("go.mod", "go.sum"):
            digest.update((module / name).read_bytes())
    return digest.hexdigest()[:16]


def _complete(bin_dir: Path, key: str) -> bool:
    key_file = bin_dir / KEY_FILE
    return (
        key_file.exists()
        and key_file.read_text().strip() == key
        and all((bin_dir / b).is_file() for b in BINARIES)
    )


def _pinned_bin_dir(env: dict[str, str]) -> Path | None:
    """The pinned version's binaries when that build is complete, else None."""
    pinned = pinned_k8s_version()
    go_version = _go(["version"], source_dir(), env).strip()
    key = _key(source_dir(), source_dir() / "kwok", _ldflags(pinned), go_version)
    bin_dir = cache_root() / "testcluster" / pinned / "bin"
    return bin_dir if _complete(bin_dir, key) else None


def _link(source: Path, dest: Path) -> None:
    try:
        os.link(source, dest)
    except OSError:  # another file system
        shutil.copy2(source, dest)


def build(k8s_version: str | None = None, log=None) -> BuildResult:
    """Build (or find cached) binaries for ``k8s_version`` (default: the pinned version)."""
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    started = time.monotonic()
    k8s_version = k8s_version or target_k8s_version()
    cache = cache_root() / "testcluster" / k8s_version
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = go_env()
        k8s_module = _module_for(k8s_version, cache)
        kwok_module = source_dir() / "kwok"
        go_version = _go(["version"], k8s_module, env).strip()
        ldflags = _ldflags(k8s_version)
        key = _key(k8s_module, kwok_module, ldflags, go_version)
        bin_dir = cache / "bin"
        if _complete(bin_dir, key):
            return BuildResult(bin_dir, k8s_version, key, True, time.monotonic() - started, None)
        shared = None if k8s_module == source_dir() else _pinned_bin_dir(env)
        others = f"etcd and kwok from {shared}" if shared else "etcd and kwok from Go modules"
        log(f"building Kubernetes {k8s_version} from Go modules, {others}, into {bin_dir} "
            "(a cold build takes tens of minutes on 2 cores)")
        staging = cache / "bin.new"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        packages = [f"k8s.io/kubernetes/cmd/{c}" for c in K8S_COMMANDS] + ([] if shared else [ETCD_PACKAGE])
        flags = ["-trimpath", "-buildvcs=false"]
        _go(["build", *flags, f"-ldflags={ldflags}", "-o", f"{staging}/", *packages], k8s_module, env)
        if shared:
            for name in SHARED:
                _link(shared / name, staging / name)
        else:
            (staging / "server").rename(staging / "etcd")  # go names the etcd main package "server"
            kwok_packages = [f"sigs.k8s.io/kwok/cmd/{c}" for c in KWOK_COMMANDS]
            _go(["build", *flags, "-ldflags=-s -w", "-o", f"{staging}/", *kwok_packages], kwok_module, env)
        (staging / KEY_FILE).write_text(key + "\n")
        shutil.rmtree(bin_dir, ignore_errors=True)
        staging.rename(bin_dir)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        result = BuildResult(bin_dir, k8s_version, key, False, time.monotonic() - started, peak)
        (cache / "build.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
        return result


def build_anchor(k8s_version: str | None = None, log=None) -> Path:
    """Build (or find cached) ``allocbench``, the Go structured allocator, for ``k8s_version``.

    It is a package of the control plane's own module (``testcluster/allocbench``), so it is
    compiled from the same go.mod and go.sum, i.e. the very ``k8s.io/dynamic-resource-allocation``
    the scheduler was built with, from the same module cache. For another version the package is
    copied into that version's generated module. Keyed like the control plane, plus its source.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    k8s_version = k8s_version or target_k8s_version()
    cache = cache_root() / "testcluster" / k8s_version
    cache.mkdir(parents=True, exist_ok=True)
    source = source_dir() / ANCHOR / "main.go"
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = go_env()
        module = _module_for(k8s_version, cache)
        if module != source_dir():
            (module / ANCHOR).mkdir(exist_ok=True)
            shutil.copyfile(source, module / ANCHOR / "main.go")
        go_version = _go(["version"], module, env).strip()
        digest = hashlib.sha256(f"{RECIPE}\n{go_version}\n".encode())
        for path in (module / "go.mod", module / "go.sum", source):
            digest.update(path.read_bytes())
        key = digest.hexdigest()[:16]
        out_dir = cache / "anchor"
        binary = out_dir / ANCHOR
        key_file = out_dir / KEY_FILE
        if binary.is_file() and key_file.exists() and key_file.read_text().strip() == key:
            return binary
        log(f"building the Go allocator anchor {ANCHOR} for Kubernetes {k8s_version} into {out_dir}")
        out_dir.mkdir(exist_ok=True)
        _go(["build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", str(binary), f"./{ANCHOR}"], module, env)
        key_file.write_text(key + "\n")
        return binary


def main(argv: list[str] | None = None) -> int:
    """Command line: build, or write a module for another Kubernetes version."""
    parser = argparse.ArgumentParser(prog="python -m drawb.testing.build", description=__doc__.split("\n")[0])
    parser.add_argument("--k8s-version", help="k8s.io/kubernetes version, e.g. v1.37.2 (default: pinned)")
    parser.add_argument("--write-module", metavar="DIR", type=Path,
                        help="only generate the consumer go.mod/go.sum for --k8s-version into DIR")
    parser.add_argument("--anchor", action="store_true",
                        help="build the Go allocator anchor (allocbench) instead; prints its path")
    args = parser.parse_args(argv)
    if args.anchor:
        print(build_anchor(args.k8s_version))
        return 0
    if args.write_module:
        write_module(args.write_module, args.k8s_version or pinned_k8s_version())
        return 0
    result = build(args.k8s_version)
    print(json.dumps(result.to_json()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
