"""``convert``: rewrite v1beta1 and v1beta2 DRA manifests to ``resource.k8s.io/v1`` as the API server converts them.

Only the lines a conversion changes are touched: comments, quoting, key order and every other line stay
byte for byte. What changes is listed per document (see ``drawb.convert.facts`` for the rules).

>>> new_text, changes = convert_text(open("claim.yaml").read(), "claim.yaml")   # doctest: +SKIP
"""

from __future__ import annotations

from drawb.convert.document import DocumentChange, convert_text
from drawb.convert.errors import ConvertInputNotYaml, ConvertOutputRefused

__all__ = ["ConvertInputNotYaml", "ConvertOutputRefused", "DocumentChange", "convert_text"]
