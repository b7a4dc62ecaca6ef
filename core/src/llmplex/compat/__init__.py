"""The APIs of the systems llmplex was designed from, mapped onto llmplex's own engine.

Each submodule is imported only when used (``import llmplex`` never loads them).
"""
