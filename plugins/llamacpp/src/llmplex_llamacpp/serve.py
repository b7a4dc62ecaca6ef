"""Child-process entry point: run llama.cpp's HTTP server for one GGUF file.

``python -m llmplex_llamacpp.serve --model PATH --ready-file FILE [--embedding]`` loads
the model (for chat, or with ``--embedding`` for ``/v1/embeddings``), serves it
on 127.0.0.1 (a free port unless ``--port`` is given), then writes
``{"pid": ..., "port": ...}`` to the ready file (atomically) and runs until
SIGTERM/SIGINT, or until the ``--parent-pid`` process is gone.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

from .chat_template import chat_template_for

DEFAULT_N_CTX = 4096
"""Context size in tokens (shared by all slots)."""

DEFAULT_N_PARALLEL = 2
"""Request slots decoded concurrently."""

POOLING_CHOICES = ("model", "mean", "cls", "last")
"""``--pooling`` values: ``model`` keeps the GGUF's own pooling type (BERT-style embedding models carry one)."""

DEFAULT_BATCH = 2048
"""Prompt tokens llama.cpp takes per logical step (its own default)."""

DEFAULT_UBATCH = 512
"""Prompt tokens per compute pass (llama.cpp's own default; bench/local_agent.py measures the others)."""

DEFAULT_THREADS = max(1, (os.cpu_count() or 2) // 2)
"""Half the CPUs for generating: llama.cpp's spinning thread pool slows down many-fold when
its threads compete with other processes for every core."""

DEFAULT_BATCH_THREADS = os.cpu_count() or 2
"""Every CPU for reading the prompt, which is compute-bound matrix work: on 2 CPUs, 861 prompt tokens read at
3.9 tokens/s with 2 threads against 2.8 with 1, on a machine loaded ~7x its cores (bench/local_agent.py)."""


def main(argv: list[str] | None = None) -> None:
    """Serve until told to stop; the exit code is 0 on a requested stop."""
    args = _parse_args(argv)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _exit_now)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(args.model)
    if args.mmproj is not None:
        params.mmproj.path = str(args.mmproj)
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.n_ctx
    params.n_parallel = args.n_parallel
    params.kv_unified = True
    params.use_jinja = True
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.batch_threads
    params.n_batch = args.batch
    params.n_ubatch = args.ubatch
    if args.embedding:
        params.embedding = True
        params.n_ubatch = params.n_batch  # an embedded text must fit one micro-batch (non-causal models)
        if args.pooling != "model":
            params.pooling_type = getattr(xllamacpp.llama_pooling_type, f"LLAMA_POOLING_TYPE_{args.pooling.upper()}")
    else:
        template = chat_template_for(args.model)
        if template is not None:
            params.chat_template = template
    server = xllamacpp.Server(params)
    port = urlsplit(server.listening_address).port
    _write_atomically(args.ready_file, json.dumps({"pid": os.getpid(), "port": port}))
    print(f"llmplex: serving {args.model} on {server.listening_address}", flush=True)
    while args.parent_pid is None or os.getppid() == args.parent_pid:
        time.sleep(0.5)
    print("llmplex: parent process is gone, stopping", flush=True)
    _exit_now(signal.SIGTERM, None)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m llmplex_llamacpp.serve")
    parser.add_argument("--model", type=Path, required=True, help="GGUF file to serve")
    parser.add_argument("--mmproj", type=Path, default=None, help="the model's multimodal projector GGUF (images)")
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument("--n-parallel", type=int, default=DEFAULT_N_PARALLEL)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="threads generating the answer")
    parser.add_argument("--batch-threads", type=int, default=DEFAULT_BATCH_THREADS, help="threads reading the prompt")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="logical batch: prompt tokens per step")
    parser.add_argument("--ubatch", type=int, default=DEFAULT_UBATCH, help="physical batch: tokens per compute pass")
    parser.add_argument("--parent-pid", type=int, default=None, help="exit when it dies")
    parser.add_argument("--embedding", action="store_true", help="serve /v1/embeddings instead of chat")
    parser.add_argument(
        "--pooling",
        choices=POOLING_CHOICES,
        default="model",
        help="how token vectors become one per text with --embedding; model: as the GGUF says",
    )
    return parser.parse_args(argv)


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    """Exit at once: the server keeps no state worth a slow native teardown."""
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
