"""llmplex-openai: the ``openai:`` prefix and any OpenAI-compatible server.

Importing this package is cheap; the hookimpls live in ``llmplex_openai.plugin``
and the OpenAI SDK is imported only when a provider of this plugin is first used.
"""
