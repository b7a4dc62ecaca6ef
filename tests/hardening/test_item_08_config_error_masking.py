"""Issue 12, item 8: config errors never echo a secret, even under a misspelt or unknown key.

A value is masked when its key looks secret (a word such as key, token, secret,
password, passwd, auth, credential) or when the value looks like a key (a known
prefix, or a long run mixing letters and digits); credentials inside a URL are
masked in an invalid ``base_url`` (tested with item 7). The error keeps the file,
the key and what was expected, so the user can still fix it; no exception chained
to it (pydantic's ValidationError, a UnicodeDecodeError holding the file's bytes)
carries the raw values.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from pathlib import Path

import pytest

import llmplex
from tests.hardening.echo_server import exception_texts, leaked


def key_like() -> str:
    return f"gw{secrets.token_hex(20)}"


def word_like() -> str:
    """A secret that does not look like a key (letters only), so only its key's name can mask it."""
    return "-".join(secrets.choice(["correct", "horse", "battery", "staple", "orbit", "velvet"]) for _ in range(6))


CASES = {
    # name: (TOML lines of [providers.openai], the secret, the key the message must still name)
    "misspelt api_key holding a key": ('api_kye = "{s}"', key_like, "providers.openai.api_kye"),
    "unknown auth setting": ('auth_tok = "{s}"', word_like, "providers.openai.auth_tok"),
    "unknown passwd setting": ('proxy_passwd = "{s}"', word_like, "providers.openai.proxy_passwd"),
    "unknown credential table": ('gcp = {{ credential = "{s}" }}', word_like, "providers.openai.gcp"),
    "secret in an array": ('client_secrets = ["{s}"]', word_like, "providers.openai.client_secrets"),
    "invalid base_url holding a key": ('base_url = "gateway.example/v1/{s}"', key_like, "providers.openai.base_url"),
    "misspelt base_url holding a key": ('base_uri = "https://gateway.example/{s}"', key_like, "base_uri"),
}


def write_config(directory: Path, body: str) -> Path:
    path = directory / "typo.toml"
    path.write_text(f"[providers.openai]\n{body}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_item_8_config_errors_mask_secret_values(case: str, isolated_config: Path) -> None:
    line, make, key = CASES[case]
    secret = make()
    path = write_config(isolated_config, line.format(s=secret))
    with pytest.raises(llmplex.LLMConfigurationError) as caught:
        llmplex.Client(path).route("openai:gpt-4o-mini")
    error = caught.value
    assert key in str(error) and str(path) in str(error)  # still says where and which key
    assert leaked(secret, exception_texts(error)) == []


def test_item_8_a_non_utf8_config_file_error_does_not_carry_the_file(isolated_config: Path) -> None:
    secret = key_like()
    path = isolated_config / "latin1.toml"
    path.write_bytes(f'[providers.openai]\napi_key = "{secret}"\nnote = "caf'.encode() + b'\xe9"\n')
    with pytest.raises(llmplex.LLMConfigurationError, match="not UTF-8") as caught:
        llmplex.Client(path)
    assert leaked(secret, exception_texts(caught.value)) == []


def test_item_8_misplaced_top_level_secret_is_masked(isolated_config: Path) -> None:
    secret = word_like()
    path = isolated_config / "top.toml"
    path.write_text(f'default_model = "openai:gpt-4o-mini"\nopenai_credential = "{secret}"\n', encoding="utf-8")
    with pytest.raises(llmplex.LLMConfigurationError, match="openai_credential") as caught:
        llmplex.Client(path)
    assert leaked(secret, exception_texts(caught.value)) == []


def test_item_8_environment_typo_holding_a_key_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = key_like()
    monkeypatch.setenv("LLMPLEX_PROVIDERS__OPENAI__API_KYE", secret)
    with pytest.raises(llmplex.LLMConfigurationError, match="api_kye") as caught:
        llmplex.Client().route("openai:gpt-4o-mini")
    assert leaked(secret, exception_texts(caught.value)) == []


def test_item_8_cli_providers_and_debug_output_mask_config_secrets(tmp_path: Path) -> None:
    made = {name: make() for name, (_, make, _) in CASES.items()}
    body = "\n".join(
        line.format(s=made[name]) for name, (line, _, _) in CASES.items() if not name.startswith("base_url")
    )
    password = made["unknown auth setting"]
    body += f'\n[providers.gw]\nplugin = "openai"\nbase_url = "ftp://admin:{password}@gateway.example"\n'
    path = write_config(tmp_path, body)
    outputs = []
    for args in (["providers"], ["providers", "--check"], ["--debug", "complete", "-m", "openai:gpt-4o-mini", "hi"]):
        done = subprocess.run(
            [sys.executable, "-m", "llmplex", "--config", str(path), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        outputs.append(done.stdout + done.stderr)
    assert "api_kye" in outputs[2]
    for secret in made.values():
        pieces = [secret[i : i + 12] for i in range(len(secret) - 11)]
        assert [piece for piece in pieces if any(piece in output for output in outputs)] == []
