"""What can go wrong running the CLI, as plain exceptions that ``classify_error`` maps."""

from __future__ import annotations

from typing import Any

__all__ = ["CLIExitError", "CLIOutputError", "CLIResultError", "CLITimeoutError"]


class CLITimeoutError(Exception):
    """The deadline passed; the process group was killed."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"the claude CLI did not finish within {timeout:.3g}s and was killed")
        self.timeout = timeout


class CLIExitError(Exception):
    """The CLI exited with a non-zero status and no JSON result."""

    def __init__(self, return_code: int, stderr: str, stdout: str = "") -> None:
        detail = (stderr.strip() or stdout.strip() or "no output").splitlines()[-1][:300]
        super().__init__(f"the claude CLI exited with status {return_code}: {detail}")
        self.return_code = return_code
        self.stderr = stderr


class CLIOutputError(Exception):
    """The CLI's output was not the JSON it documents."""

    def __init__(self, problem: str, stdout: str, return_code: int, stderr: str = "") -> None:
        super().__init__(f"the claude CLI output is not valid JSON output ({problem}): {stdout.strip()[:200]!r}")
        self.return_code = return_code
        self.stderr = stderr


class CLIResultError(Exception):
    """The CLI answered with a result whose ``is_error`` is true."""

    def __init__(self, result: dict[str, Any], return_code: int | None, stderr: str = "") -> None:
        super().__init__(str(result.get("result") or result.get("subtype") or "error"))
        self.result = result
        self.return_code = return_code
        self.stderr = stderr
