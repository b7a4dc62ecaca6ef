"""``llmplex serve``: the OpenAI- and Anthropic-compatible gateway (``pip install 'llmplex[gateway]'``)."""

from __future__ import annotations

from pathlib import Path

import click

from llmplex.errors import LLMConfigurationError

__all__ = ["serve_command"]


@click.command("serve")
@click.option("--host", default=None, help="Address to listen on (default: [gateway] host, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="TCP port (default: [gateway] port, 4000; 0: any free port).")
@click.option("--workers", type=int, default=None, help="Worker processes (default: [gateway] workers, 1).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="A TOML config file to serve.")
@click.option("--tls-certfile", default=None, help="PEM certificate chain: serve HTTPS.")
@click.option("--tls-keyfile", default=None, help="PEM private key of the certificate.")
@click.pass_context
def serve_command(
    ctx: click.Context,
    host: str | None,
    port: int | None,
    workers: int | None,
    config_path: Path | None,
    tls_certfile: str | None,
    tls_keyfile: str | None,
) -> None:
    """Serve every llmplex model over the OpenAI and Anthropic HTTP APIs until stopped (Ctrl-C, SIGTERM).

    The master key comes from LLMPLEX_MASTER_KEY or the file LLMPLEX_MASTER_KEY_FILE names.
    """
    try:
        import prometheus_client  # noqa: F401  # the gateway extra, checked before anything starts
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401

        from llmplex.gateway.server import ServeOptions, serve
    except ImportError as exc:
        raise LLMConfigurationError(
            f"llmplex serve needs the gateway extra ({exc.name} is missing): pip install 'llmplex[gateway]'"
        ) from None
    parent = ctx.parent.params.get("config_path") if ctx.parent is not None else None
    options = ServeOptions(config_path or parent, host, port, workers, tls_certfile, tls_keyfile)
    serve(options, announce=click.echo)
