"""Fake provider networks for the cost tests: respx for openai, the httpx2 fake for anthropic and gemini."""

from tests.plugins.anthropic.fake_http import fake_http
from tests.plugins.openai.conftest import openai_api, router

__all__ = ["fake_http", "openai_api", "router"]
