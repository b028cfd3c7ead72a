"""The subcommands behind ``%dra`` and the ``drawb`` command line."""
