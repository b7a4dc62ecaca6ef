"""The environment the CLI runs with: what it needs to run and log in, never every secret of ours."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

__all__ = ["PASSED_NAMES", "PASSED_PREFIXES", "child_environment"]

PASSED_NAMES = frozenset(
    {
        # finding programs, the user's home (the CLI's login lives there), temp files, time and terminal
        *("PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM", "LANG", "LANGUAGE"),
        # certificates and proxies, which the CLI needs to reach the API at all
        *("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"),
        *("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"),
        # what Windows needs to start a process
        *("SYSTEMROOT", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP"),
    }
)
PASSED_PREFIXES = ("LC_", "ANTHROPIC_", "CLAUDE_", "DISABLE_")
"""Locale, the Anthropic and Claude Code variables, and Claude Code's ``DISABLE_*`` switches."""


def child_environment(parent: Mapping[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """The variables of ``parent`` the CLI gets: the fixed list, plus ``pass_env`` names or ``NAME_*`` patterns."""
    patterns = tuple(pass_env)
    return {
        name: value
        for name, value in parent.items()
        if name in PASSED_NAMES
        or name.startswith(PASSED_PREFIXES)
        or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    }
