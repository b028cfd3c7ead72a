"""drawb's least-privilege RBAC manifest: the roles it needs, and which role grants a request."""
