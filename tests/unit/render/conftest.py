"""Fixtures for the render tests: the selector compiler and a folder of user templates."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from drawb.render import default_selector_compiler


@pytest.fixture
def compile_selector():
    """The selector compiler render() uses by default (drawb.cel, as the API server compiles)."""
    return default_selector_compiler


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    """A user template folder holding ``note``: one free-text and one required parameter."""
    (tmp_path / "note.yaml.j2").write_text(
        textwrap.dedent(
            """\
            {#- drawb
            about: A ConfigMap-free test template - a claim whose annotation carries free text.
            params:
              - {name: claim_name, type: dns_subdomain, description: name of the claim}
              - {name: note, type: string, default: hello, description: free text for an annotation}
              - {name: product, type: string, default: H100, description: product fragment for a selector}
            -#}
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaim
            metadata:
              name: {{ claim_name }}
              annotations:
                drawb.example/note: {{ note }}
            spec:
              devices:
                requests:
                - name: gpu
                  exactly:
                    deviceClassName: gpu.nvidia.com
                    selectors:
                    - cel:
                        expression: >-
                          device.attributes['gpu.nvidia.com'].productName.contains({{ product | cel }})
            """
        )
    )
    return tmp_path
