"""Conformance checks of what a plugin declares: its entry point, capabilities, hooks and settings."""

from __future__ import annotations

import pytest

from llmplex.client import Client
from llmplex.errors import LLMConfigurationError
from llmplex.provider import ProviderSettings
from llmplex.testing.kit_base import KitBase
from llmplex.testing.wire import secretish_fields_not_secret

__all__ = ["SetupChecks"]


class SetupChecks(KitBase):
    """Registration and settings."""

    def test_registers_its_prefix_and_capabilities(self, llm: Client) -> None:
        """The entry point names the prefix, and the declared capabilities are the registered ones."""
        assert self.prefix, "set `prefix` on the conformance test class"
        assert self.model, "set `model` on the conformance test class"
        assert self.prefix in llm.host.entries(), f"no entry point named {self.prefix!r} in group llmplex.providers"
        provider = llm.route(self.spec).provider
        info = provider.info
        assert info.name == self.prefix
        assert issubclass(info.settings_model, ProviderSettings)
        declared = {
            "tools": self.supports_tools,
            "native_structured_output": self.supports_native_structured_output,
            "streaming": self.supports_streaming,
            "response_chains": self.supports_response_chains,
        }
        registered = {name: getattr(info.capabilities, name) for name in declared}
        assert registered == declared, "the test class must declare the capabilities the plugin registers"
        hooks = provider.hooks
        assert hooks.implements("format"), "llmplex_format is required"
        assert hooks.implements("parse"), "llmplex_parse is required"
        assert hooks.implements("call") or hooks.implements("acall"), "implement llmplex_call or llmplex_acall"
        assert hooks.implements("acall") == self.supports_async, "supports_async must say whether acall is native"
        streams = hooks.implements("stream") or hooks.implements("astream")
        assert streams == self.supports_streaming, "Capabilities.streaming must say whether stream hooks exist"
        if streams:
            assert hooks.implements("parse_event"), "a streaming plugin must implement llmplex_parse_event"
        if self.supports_async and self.supports_streaming:
            assert hooks.implements("astream"), "a plugin with native async calls streams natively async too"

    def test_settings_are_validated(self, llm: Client) -> None:
        """Unknown settings are rejected by name; env vars name real fields; keys are secret."""
        settings_model = llm.route(self.spec).provider.info.settings_model
        fields = set(settings_model.model_fields)
        assert set(settings_model.env_vars) <= fields, "env_vars must map existing settings fields"
        assert not secretish_fields_not_secret(settings_model), "key/token/secret fields must be SecretStr"
        if self.secret_setting:
            assert self.secret_setting in fields
        bad = Client(providers={self.prefix: {**self.provider_settings(), "kit_no_such_setting": 1}})
        with pytest.raises(LLMConfigurationError, match="kit_no_such_setting"):
            bad.route(self.spec)
