"""Imported at start-up by a child Python with this folder on PYTHONPATH (see tests/support/cli.py).

At exit it writes the names in ``sys.modules``, one a line, to the file named by
``SYSMODULES_DUMP``: what a command imported, including modules loaded with
``importlib.import_module`` (which ``-X importtime`` does not report).
"""

import atexit
import os
import sys
from pathlib import Path

_target = os.environ.get("SYSMODULES_DUMP")
if _target:
    atexit.register(lambda: Path(_target).write_text("\n".join(sorted(sys.modules)), encoding="utf-8"))
