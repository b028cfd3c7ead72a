"""The claim being built (``%dra build``), as plain data: requests, their conditions, constraints and sharing.

Pure: no I/O and no widgets. ``ClaimSpec.documents()`` writes the ResourceClaimTemplate and Pod a person
would write by hand (the v1 ``exactly:`` nesting, the CEL a person would type); ``spec_from_documents``
reads such manifests back, keeping what it does not model verbatim.
"""

from drawb.build.claim import DEFAULT_CLASS, Choice, ClaimSpec, Constraint, Request
from drawb.build.conditions import CONDITION_KINDS, OPERATORS, BuildError, Condition
from drawb.build.read import spec_from_claim_spec, spec_from_documents
from drawb.build.sharing import INTERVALS, STRATEGIES, Sharing

__all__ = ["CONDITION_KINDS", "DEFAULT_CLASS", "INTERVALS", "OPERATORS", "STRATEGIES", "BuildError", "Choice",
           "ClaimSpec", "Condition", "Constraint", "Request", "Sharing", "spec_from_claim_spec", "spec_from_documents"]
