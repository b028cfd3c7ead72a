"""Access and safety: drawb's least-privilege RBAC manifest and the redaction of credentials."""
