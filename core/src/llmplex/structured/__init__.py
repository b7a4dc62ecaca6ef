"""Structured output: an output type becomes a JSON Schema, a strategy, and a validated value."""
