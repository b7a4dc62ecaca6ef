"""OpenAI-compatible providers for llmplex as presets over the openai plugin's translation."""
