"""Kubernetes API value types, parsed and printed exactly as the API server does."""

from drawb.api.quantity import Format, Quantity, QuantityError, is_quantity
from drawb.api.semver import Semver, SemverError, is_semver

__all__ = ["Format", "Quantity", "QuantityError", "Semver", "SemverError", "is_quantity", "is_semver"]
