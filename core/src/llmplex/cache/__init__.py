"""The opt-in response cache: a non-provider plugin of the pipeline (``[cache]``, ``ResponseCache``)."""

from llmplex.cache.plugin import CachedAnswer, CacheWarning, ResponseCache
from llmplex.cache.stores import DiskStore, MemoryStore, Store, cache_dir

__all__ = ["CacheWarning", "CachedAnswer", "DiskStore", "MemoryStore", "ResponseCache", "Store", "cache_dir"]
