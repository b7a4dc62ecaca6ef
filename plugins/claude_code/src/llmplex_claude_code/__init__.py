"""The Claude Code CLI as an llmplex provider: ``claude-code:sonnet``, ``claude-code:opus``, ...

Each request runs ``claude -p`` (print mode) with JSON output, the prompt on
stdin, in its own process group so that the deadline can end it whole.
"""
