"""JupyterLab on a loopback port and headless Debian Chromium driven by Playwright, for the browser tier."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT_S = 180
# Lab settings: every cell stays in the DOM (no windowing), and no news or update checks.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read()


def _wait_until_up(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            _get(url + "/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise RuntimeError(f"JupyterLab did not answer within {START_TIMEOUT_S}s:\n{log.read_text()[-3000:]}")


def _stop(url: str, server: subprocess.Popen) -> None:
    """Shut down the server's kernels through its API, then the server's process group."""
    try:
        for kernel in json.loads(_get(url + "/api/kernels")):
            request = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}", method="DELETE")
            urllib.request.urlopen(request, timeout=30).close()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        pass  # the server is already down; its kernels went with it
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[str]:
    """The base URL of a JupyterLab serving a copy of notebooks/ with an empty token, one per test module (so one
    module's open notebooks and kernels never reach another's page); stopped afterwards."""
    home = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", home / "notebooks")
    for name, values in LAB_SETTINGS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(
        os.environ,
        JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
    )
    port = _free_port()
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        f"--ServerApp.root_dir={home / 'notebooks'}", "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = home / "lab.log"
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until_up(url, server, log)
        yield url
    finally:
        _stop(url, server)


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium (Playwright cannot download its own browsers here).

    One per module: while Playwright's sync API is open the main thread has a running asyncio loop, so a
    session-wide browser made every later test (the widgets' debouncers among them) see an event loop.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember whether a test's body failed, so its page can be photographed on the way out."""
    report = yield
    if report.when == "call":
        item.body_failed = report.failed
    return report


@pytest.fixture
def page(browser, request):
    """A fresh page; screenshots go to artifacts/browser/, and a failing test leaves one named after it."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        yield page
        if getattr(request.node, "body_failed", False):
            page.screenshot(path=str(ARTIFACTS / f"FAILED-{request.node.name}.png"), full_page=True)
    finally:
        context.close()
