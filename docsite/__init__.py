"""The documentation site's generated pages (MkDocs hooks in ``hooks.py``): the tutorials executed from
``notebooks/``, the command reference from drawb's command table, the Kubernetes versions and gates from
``drawb.versions``. Not part of the drawb package."""
