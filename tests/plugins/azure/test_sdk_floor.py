"""What llmplex-azure relies on in the openai SDK's Azure client, checked at whatever SDK version is installed
(the sdk-lowest-azure env installs the floor; its wire tests are tests/providers_next/*azure*)."""

from __future__ import annotations

from llmplex_azure.clients import create_client
from llmplex_azure.settings import AzureSettings
from openai._models import FinalRequestOptions


def test_the_sdk_puts_the_deployment_in_the_chat_url_and_keeps_the_v1_responses_path() -> None:
    chat = create_client(AzureSettings(endpoint="https://res.openai.azure.com", api_key="k"))
    options = FinalRequestOptions(method="post", url="/chat/completions", json_data={"model": "dep"})
    request = chat._build_request(options)
    assert (
        str(request.url)
        == "https://res.openai.azure.com/openai/deployments/dep/chat/completions?api-version=2024-10-21"
    )
    responses = create_client(AzureSettings(endpoint="https://res.openai.azure.com", api_key="k", api="responses"))
    request = responses._build_request(FinalRequestOptions(method="post", url="/responses", json_data={"model": "d"}))
    assert str(request.url) == "https://res.openai.azure.com/openai/v1/responses?api-version=preview"


def test_the_sdk_asks_the_token_provider_for_each_request() -> None:
    tokens = iter(["t1", "t2"])
    client = create_client(
        AzureSettings(endpoint="https://res.openai.azure.com", azure_ad_token_provider=lambda: next(tokens))
    )
    first = client._prepare_options(FinalRequestOptions(method="post", url="/chat/completions"))
    second = client._prepare_options(FinalRequestOptions(method="post", url="/chat/completions"))
    assert [dict(o.headers or {})["Authorization"] for o in (first, second)] == ["Bearer t1", "Bearer t2"]
