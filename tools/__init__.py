"""Repository tools: the release (``tools/release``) and the dependency lock (``tools/lock``)."""
