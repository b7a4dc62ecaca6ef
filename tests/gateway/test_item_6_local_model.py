"""Issue 22 item 6: the real local model (llama.cpp's server and a model from PyPI) behind the gateway."""

from __future__ import annotations

import anthropic
import openai

from tests.gateway.harness import MASTER_KEY, gateway_config, running_gateway

try:
    from llmplex_llamacpp.model_files import SMALL_MODEL
    from llmplex_llamacpp.server import LocalServer
except ImportError as exc:  # pragma: no cover - the message is the point
    raise RuntimeError(
        "this test needs the local model plugin: pip install -e plugins/openai -e plugins/llamacpp"
    ) from exc

MODEL = f"llamacpp:{SMALL_MODEL}"


def test_item_6_the_local_model_answers_openai_and_anthropic_clients_through_the_gateway() -> None:
    LocalServer.for_model(SMALL_MODEL)  # started (or reused) here, not inside the gateway's first request
    config = gateway_config(timeout=120, gateway={"models": [MODEL]})
    with running_gateway(config) as gateway:
        chat = openai.OpenAI(base_url=gateway.url + "/v1", api_key=MASTER_KEY, max_retries=0)
        answer = chat.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "The capital of France is"}], max_tokens=8
        )
        assert answer.choices[0].finish_reason in ("stop", "length")
        assert answer.usage is not None and answer.usage.prompt_tokens > 0 and answer.usage.completion_tokens > 0
        claude = anthropic.Anthropic(base_url=gateway.url, api_key=MASTER_KEY, max_retries=0)
        with claude.messages.stream(
            model=MODEL, max_tokens=8, messages=[{"role": "user", "content": "Count: one, two,"}]
        ) as stream:
            final = stream.get_final_message()
        assert final.stop_reason in ("end_turn", "max_tokens")
        assert final.usage.output_tokens > 0
        assert MODEL in {m.id for m in chat.models.list().data}
        record = gateway.recorder.wait_for(lambda r: r.endpoint == "messages")  # made once its last byte is sent
        assert (record.provider, record.status, record.stream) == ("llamacpp", 200, True)
