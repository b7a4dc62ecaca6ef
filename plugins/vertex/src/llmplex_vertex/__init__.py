"""Google Vertex AI provider for llmplex: Gemini and Claude models on Vertex (entry point ``vertex``)."""
