"""The credential scanner (tests/credscan.py) catches what it must, so a clean run means something."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "planted-token-5f3a9c2e71b84d06"
LONG_TOKEN = "".join(f"{i:02d}long-token-part" for i in range(8))  # 136 characters
PEM_KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIPlantedKeyMaterialAbCdEfGh\n-----END EC PRIVATE KEY-----"

INNER_TESTS = f'''
import logging, sys
from tests import credscan

KUBECONFIG = """
apiVersion: v1
kind: Config
users:
- name: planted
  user:
    token: {TOKEN}
"""

def setup_module(module):
    import pathlib, tempfile
    path = pathlib.Path(tempfile.mkdtemp()) / "kubeconfig.yaml"
    path.write_text(KUBECONFIG)
    credscan.remember_kubeconfig(path)
    credscan.remember("{LONG_TOKEN}", "a long token")

def test_clean():
    print("nothing secret here: Authorization: Bearer <redacted>")

def test_token_on_stdout():
    print("connecting with {TOKEN}")

def test_token_in_a_debug_record():
    logging.getLogger("urllib3.connectionpool").debug("header %s", "{TOKEN}")

def test_private_key_on_stderr():
    print({PEM_KEY!r}, file=sys.stderr)

def test_the_middle_of_a_long_token():
    print("shortened: ...{LONG_TOKEN[40:100]}...")

def test_bearer_header_in_a_failure():
    assert False, "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123"
'''


def test_scanner_fails_each_leaking_test_and_masks_the_secret(pytester, monkeypatch):
    pytester.makepyfile(test_inner=INNER_TESTS)
    pytester.makeini("[pytest]\nlog_level = WARNING\n")
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    result = pytester.runpytest_subprocess("-p", "tests.credscan", "-p", "no:cacheprovider", "-rf")
    result.assert_outcomes(passed=1, failed=5)
    out = result.stdout.str() + result.stderr.str()
    assert "test_token_on_stdout (call) shows a credential: the token of user 'planted'" in out
    assert "test_token_in_a_debug_record (call) shows a credential: the token of user 'planted'" in out
    assert "a PEM private key in Captured stderr call" in out
    assert "an Authorization header in the failure report" in out
    assert "test_the_middle_of_a_long_token (call) shows a credential: part of a long token" in out
    assert "5 leak(s)" in out
    assert TOKEN not in out and "MHcCAQEEIPlantedKeyMaterial" not in out and LONG_TOKEN[48:72] not in out
