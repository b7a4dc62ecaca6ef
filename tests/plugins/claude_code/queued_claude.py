"""A stand-in for the `claude` CLI that answers from a queue (the conformance tests install it as `claude`).

Next to the executable, ``queue.json`` holds the scripted answers, oldest first, each
``{"output_format": "json" | "stream-json", "lines": [...], "stderr": "...", "exit_code": 0, "delay": 0.0}``
(``delay``: seconds to wait before answering):
the stdout lines are written as they are, except that, like the real CLI, a successful
result (not a refusal) gets ``structured_output`` (the result text parsed) when ``--json-schema`` was given.
Every run appends what it received (argv, stdin, the ``CLAUDE_CODE_*`` environment) to ``runs.jsonl``.
"""

import fcntl
import json
import os
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.realpath(__file__))


def next_answer() -> dict[str, Any]:
    with open(os.path.join(HERE, "queue.json"), "r+") as queue:
        fcntl.flock(queue, fcntl.LOCK_EX)
        answers: list[dict[str, Any]] = json.load(queue)
        if not answers:
            return {}
        queue.seek(0)
        json.dump(answers[1:], queue)
        queue.truncate()
        return answers[0]


def main() -> int:
    argv = sys.argv[1:]
    stdin = sys.stdin.read()
    env = {k: v for k, v in os.environ.items() if k.startswith("CLAUDE_CODE_")}
    with open(os.path.join(HERE, "runs.jsonl"), "a") as runs:
        runs.write(json.dumps({"argv": argv, "stdin": stdin, "env": env}) + "\n")
    answer = next_answer()
    if not answer:
        print("the queued fake claude has no answer queued for this run", file=sys.stderr)
        return 3
    time.sleep(answer.get("delay", 0.0))
    asked = argv[argv.index("--output-format") + 1] if "--output-format" in argv else "text"
    if asked != answer["output_format"]:
        print(f"the queued fake claude has a {answer['output_format']} answer, run with {asked}", file=sys.stderr)
        return 3
    for line in answer["lines"]:
        answered = line.get("type") == "result" and not line.get("is_error") and line.get("stop_reason") != "refusal"
        if answered and "--json-schema" in argv:
            line.update(structured_output=json.loads(line["result"]), stop_reason="tool_use")
        sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer.get("exit_code", 0))


sys.exit(main())
