"""The errors of ``migrate``: input drawb cannot read or rewrite, named with where it is."""

from __future__ import annotations

from drawb.errors import DrawbError


class ManifestNotFound(DrawbError):
    """A path given to migrate is neither a file nor a folder of YAML files."""


class ManifestNotYaml(DrawbError):
    """A manifest file is not valid YAML (the message names the file and line)."""

    hint = "fix the YAML at that line (an editor with a YAML linter shows the spot); nothing was written"


class UnknownWorkloadKind(DrawbError):
    """A document asks for NVIDIA extended resources, but drawb does not know where its pod template is."""


class InvalidLegacyRequest(DrawbError):
    """A legacy ``nvidia.com/gpu`` or ``nvidia.com/mig-*`` request that the API server itself would refuse."""

    hint = ("an extended resource is a whole number of devices, at least 1, with requests equal to limits; "
            "fix the manifest and run migrate again (nothing was written)")
