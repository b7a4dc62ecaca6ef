"""Many requests at once: bounded concurrency, results in order, none lost, resumable journal."""

from llmplex.batching.run import abatch, batch

__all__ = ["abatch", "batch"]
