"""Finding, loading and isolating plugins."""
