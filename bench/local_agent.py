"""The local model as a coding agent's backend (issue 32 item 5): llama.cpp's prompt rate by threads and
micro-batch, and the first and second turn of the real Codex CLI through ``llmplex serve``.

    python bench/local_agent.py                # the sweep, then the agent's two turns (minutes)
    python bench/local_agent.py --sweep-only   # threads x ubatch only
    BENCH_SMOKE=1 python bench/local_agent.py  # a smoke run: one setting, a short prompt, no agent

The sweep starts llama.cpp's server (``python -m llmplex_llamacpp.serve``) once per setting and reads the
server's own timings of one prompt (``prompt_per_second``, prompt cache off). The agent part runs
``codex exec "Say hello"`` against a gateway over the default local model with no config, then a second turn
(``codex exec resume --last``) that re-sends the same prefix, which llama.cpp's prompt cache keeps.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from smoke import SMOKE

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.gateway.harness

MODEL = "gemma3-270m" if SMOKE else "qwen2.5-coder-1.5b"
PROMPT_WORDS = 40 if SMOKE else int(os.environ.get("BENCH_PROMPT_WORDS", "300"))
SETTINGS = [(1, 512)] if SMOKE else [(1, 512), (2, 512), (2, 256)]


def _serve(model_path: Path, workdir: Path, flags: list[str], n_ctx: int) -> tuple[subprocess.Popen[bytes], int]:
    from llmplex_llamacpp.server import serve_command

    tag = "-".join(flags[1::2]) or "defaults"
    ready = workdir / f"ready-{tag}.json"
    command = [*serve_command(model_path, ready, n_ctx=n_ctx, parent_pid=os.getpid()), *flags, "--n-parallel", "1"]
    log = (workdir / f"serve-{tag}.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not ready.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError(f"the server did not start; see {log.name}")
        time.sleep(0.2)
    return process, int(json.loads(ready.read_text())["port"])


def prompt_rate(
    model_path: Path, workdir: Path, words: int, flags: list[str] | None = None, n_ctx: int = 8192
) -> dict[str, Any]:
    """llama.cpp's own timing of one prompt of ``words`` words, with these server flags (none: the plugin's own
    settings)."""
    process, port = _serve(model_path, workdir, flags or [], n_ctx)
    try:
        text = " ".join(f"word{i % 97}" for i in range(words))
        body = {"prompt": text, "n_predict": 1, "cache_prompt": False}
        timings = httpx.post(f"http://127.0.0.1:{port}/completion", json=body, timeout=1800).json()["timings"]
        return {"tokens": timings["prompt_n"], "rate": timings["prompt_per_second"]}
    finally:
        process.terminate()
        process.wait(30)


def _sweep_flags(threads: int, ubatch: int) -> list[str]:
    return ["--threads", str(threads), "--batch-threads", str(threads), "--ubatch", str(ubatch)]


def codex_turns(workdir: Path) -> list[tuple[float, int]]:
    """Seconds and prompt tokens (what the gateway recorded) of Codex's first turn and of its second, against a
    gateway over the default local model."""
    codex = shutil.which("codex") or str(Path(sys.prefix) / "tmp" / "npm" / "node_modules" / ".bin" / "codex")
    if not Path(codex).exists():
        raise SystemExit("the codex CLI is not installed: npm install -g @openai/codex")
    import llmplex
    from tests.gateway.harness import MASTER_KEY, running_gateway

    home = workdir / "codex-home"
    home.mkdir()
    env = {**os.environ, "CODEX_HOME": str(home), "HOME": str(home), "LLMPLEX_API_KEY": MASTER_KEY}
    with running_gateway(llmplex.Client().config.model_dump()) as gateway:
        provider = (
            f'model_providers.llmplex={{name="llmplex",base_url="{gateway.url}/v1",'
            'env_key="LLMPLEX_API_KEY",wire_api="responses"}'
        )
        model = f'model="{llmplex.Client().config.default_model}"'  # as docs/gateway/agents.md's recipe names one
        base = [codex, "exec", "--skip-git-repo-check", "-c", provider, "-c", 'model_provider="llmplex"', "-c", model]
        turns: list[tuple[float, int]] = []
        seen = 0
        for extra in ([], ["resume", "--last"]):
            started = time.perf_counter()
            turn = subprocess.run(
                [*base[:2], *extra, *base[2:], "Say hello"],
                env=env,
                cwd=workdir,
                check=False,
                capture_output=True,
                timeout=1800,
                stdin=subprocess.DEVNULL,
            )
            if turn.returncode:
                said = (turn.stdout + turn.stderr).decode(errors="replace")[-3000:]
                raise SystemExit(f"codex exited with {turn.returncode}:\n{said}")
            elapsed = time.perf_counter() - started
            gateway.recorder.wait_count(seen + 1)  # a stream's record follows its last byte
            records, seen = gateway.recorder.records[seen:], len(gateway.recorder.records)
            turns.append((elapsed, sum(r.usage.input_tokens or 0 for r in records if r.usage)))
        return turns


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep-only", action="store_true")
    args = parser.parse_args()
    from llmplex_llamacpp.model_files import resolve_model

    model_path = resolve_model(MODEL)
    with tempfile.TemporaryDirectory() as tmp:
        rows = [(t, u, prompt_rate(model_path, Path(tmp), PROMPT_WORDS, _sweep_flags(t, u))) for t, u in SETTINGS]
        print(f"| model | threads | ubatch | prompt tokens | prompt tokens/s |  (os.cpu_count() = {os.cpu_count()})")
        print("|---|---|---|---|---|")
        for threads, ubatch, row in rows:
            print(f"| {MODEL} | {threads} | {ubatch} | {row['tokens']} | {row['rate']:.1f} |")
        if SMOKE or args.sweep_only:
            return
        (first, first_tokens), (second, second_tokens) = codex_turns(Path(tmp))
        print(f"\ncodex exec, default local model, no llmplex config: first turn {first:.1f} s ({first_tokens} prompt")
        print(f"tokens, {first_tokens / first:.1f} tokens/s end to end), second turn {second:.1f} s ({second_tokens})")
        words_per_token = PROMPT_WORDS / rows[0][2]["tokens"]
        from llmplex_llamacpp.settings import AGENT_N_CTX

        own = prompt_rate(model_path, Path(tmp), round(first_tokens * words_per_token), n_ctx=AGENT_N_CTX)
        share = first_tokens / first / own["rate"]
        print(f"llama.cpp's own rate for a {own['tokens']}-token prompt, the plugin's settings: {own['rate']:.1f}")
        print(f"tokens/s; the first turn ran at {share:.0%} of it (the whole turn: Codex, the gateway, the answer)")


if __name__ == "__main__":
    main()
