"""The wire APIs: the translations of OpenAI Chat Completions (``openai_chat``), Responses
(``openai_responses``) and Embeddings (``embeddings``) and of Anthropic Messages (``anthropic_messages``,
its content blocks in ``anthropic_blocks``, token counts in ``count_tokens``) into llmplex calls and back;
what their requests mean beyond their messages (each field's kind in ``fields``, ``betas``, Responses tools
in ``responses_tools``), the fit of a call to the provider it is routed to (``route_fit``) and reasoning
carried across them (``carried_reasoning``)."""
