"""Which names hold secrets: credentials named ``token`` are masked, model tokens counted are shown.

The old rule took any name with the word ``token`` for a secret and carried an exception for names
with ``rate`` or ``limit``, which both masked counts (``token_count=12``) and let a credential
through when its name mentioned a limit (``rate_limit_token``, ``limit_password``).
"""

from __future__ import annotations

import pytest

from llmplex.masking.values import REDACTED, is_secret_name, mask_setting, redact

CREDENTIALS = [
    "token",
    "api_token",
    "access_token",
    "refreshToken",
    "bearer_token",
    "SESSION_TOKEN",
    "x-auth-token",
    "HF_TOKEN",
    "token_value",
    "id_token",
    "api_key",
    "x-goog-api-key",
    "aws_secret_access_key",
    "password",
    "client_secret",
    # a limit word in the name does not make a credential safe to show
    "rate_limit_token",
    "limit_password",
    "rate_limit_api_key",
]
COUNTS = [
    "max_tokens",
    "max_output_token",
    "max_completion_tokens",
    "input_tokens",
    "token_rate_limit",
    "token_count",
    "token_budget",
    "tokens_per_minute",
    "token_type",
    "x-ratelimit-remaining-tokens",
    "tokenizer",
    "rate_limit",
]


@pytest.mark.parametrize("name", CREDENTIALS)
def test_names_of_credentials_are_secret(name: str) -> None:
    assert is_secret_name(name)
    assert mask_setting(name, "plain-value") == REDACTED


@pytest.mark.parametrize("name", COUNTS)
def test_names_of_token_counts_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)
    assert mask_setting(name, "4096") == "4096"


def test_urls_mask_credential_tokens_and_show_token_counts() -> None:
    url = "http://127.0.0.1/v1?token_count=12&rate_limit_token=hunter2hunter2&max_tokens=5&access_token=abc"
    assert redact(url) == (
        f"http://127.0.0.1/v1?token_count=12&rate_limit_token={REDACTED}&max_tokens=5&access_token={REDACTED}"
    )
