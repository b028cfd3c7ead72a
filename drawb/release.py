"""drawb's own version, as pyproject.toml states it: snapshot files record it, and ``drawb.__version__`` is it."""

VERSION = "0.1.0"
