"""Kubernetes API value types, parsed and printed exactly as the API server does."""

from drawb.api.names import (
    is_c_identifier,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_label_value,
    is_qualified_name,
    validate_driver_name,
    validate_fully_qualified_name,
    validate_pool_name,
    validate_qualified_name,
)
from drawb.api.quantity import Format, Quantity, QuantityError, is_quantity
from drawb.api.semver import Semver, SemverError, is_semver

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "Semver",
    "SemverError",
    "is_c_identifier",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_label_value",
    "is_qualified_name",
    "is_quantity",
    "is_semver",
    "validate_driver_name",
    "validate_fully_qualified_name",
    "validate_pool_name",
    "validate_qualified_name",
]
