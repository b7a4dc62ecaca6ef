"""Azure OpenAI for llmplex: ``azure:DEPLOYMENT``."""
