"""Kubernetes API value types, parsed and printed exactly as the API server does."""

from drawb.api.quantity import Format, Quantity, QuantityError, is_quantity

__all__ = ["Format", "Quantity", "QuantityError", "is_quantity"]
