"""What the API server changes when it converts a DRA object from v1beta1 or v1beta2 to ``resource.k8s.io/v1``.

Facts read from the conversion functions of ``k8s.io/kubernetes`` ``pkg/apis/resource/v1beta1`` (1.34 to 1.37);
v1beta2 has the shape of v1, so only its apiVersion changes:

- a v1beta1 request's own device fields go under ``exactly:`` (``firstAvailable`` and ``name`` stay);
- a v1beta1 device's ``basic:`` is unwrapped: its fields become the device's own;
- a v1beta1 ResourceSlice's ``nodeName: ""`` and ``allNodes: false`` are dropped (v1 has no empty values there).
"""

from __future__ import annotations

GROUP = "resource.k8s.io"
SOURCES = ("v1beta1", "v1beta2")  # the versions drawb converts from
TARGETS = ("v1",)  # the versions drawb converts to
KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice")

# v1beta1 DeviceRequest fields that v1 keeps in ExactDeviceRequest (derivedAttributes: 1.37)
EXACT_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity",
                "derivedAttributes")
EXACT_KEY = "exactly"
BASIC_KEY = "basic"
# v1beta1 ResourceSlice spec fields whose empty value v1 does not keep, with that value
SLICE_EMPTY_VALUES = {"nodeName": "", "allNodes": False}

# where each kind holds its claim spec (requests) and its devices
CLAIM_SPEC_PATH = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}


def parse_api_version(api_version: object) -> str | None:
    """The version of ``resource.k8s.io/<version>`` (``v1beta1``), or None for another group."""
    if not isinstance(api_version, str):
        return None
    group, slash, version = api_version.partition("/")
    return version if slash and group == GROUP else None
