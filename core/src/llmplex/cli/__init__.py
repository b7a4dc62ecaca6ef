"""The ``llmplex`` command line."""
