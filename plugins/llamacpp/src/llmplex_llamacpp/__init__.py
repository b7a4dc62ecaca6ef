"""llmplex-llamacpp: llama.cpp's own server and a small GGUF model as a local llmplex provider."""
