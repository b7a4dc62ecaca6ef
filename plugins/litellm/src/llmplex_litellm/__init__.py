"""LiteLLM as an llmplex provider: ``litellm:<any LiteLLM model string>``.

LiteLLM itself is imported only when the first ``litellm:`` request is sent
(see ``llmplex_litellm.sdk``), so ``import llmplex`` and ``llmplex providers``
stay free of its multi-second import.
"""
