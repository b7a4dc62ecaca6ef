"""The release of llmplex's twelve distributions: build, check, list (``tools/release``; docs/releasing.md)."""
