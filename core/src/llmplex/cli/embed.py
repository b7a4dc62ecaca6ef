"""``llmplex embed [-m MODEL] TEXT...``: embedding vectors as JSON (the configured default model without ``-m``)."""

from __future__ import annotations

import json

import click

from llmplex.client import Client

__all__ = ["embed_command"]


@click.command("embed")
@click.argument("texts", nargs=-1, required=True)
@click.option(
    "-m",
    "--model",
    default=None,
    help="provider:model, or provider: for its default embedding model; default: default_embedding_model "
    "(the local model, no API key).",
)
@click.option("--dimensions", type=int, help="Ask for shorter vectors (providers that take it).")
@click.option("--norms", is_flag=True, help="Print each vector's dimensions and norm instead of the vector.")
@click.pass_obj
def embed_command(
    client: Client, texts: tuple[str, ...], model: str | None, dimensions: int | None, norms: bool
) -> None:
    """Embed each TEXT and print a JSON object: model, provider, usage and one vector per text, in order."""
    result = client.embed(model, list(texts), dimensions=dimensions)
    out: dict[str, object] = {
        "model": result.model,
        "provider": result.provider,
        "usage": result.usage.model_dump(mode="json"),
    }
    if norms:
        out["dimensions"] = result.dimensions
        out["norms"] = result.norms()
    else:
        out["vectors"] = result.vectors
    click.echo(json.dumps(out))
