"""cel-python is loaded on the first CEL expression, not when the API server is imported or
started (its import and parser cost ~0.6 s; a cluster without matchConditions or policies never
pays for it)."""

from __future__ import annotations

import subprocess
import sys


def test_the_server_core_does_not_load_cel_python_until_an_expression_is_compiled() -> None:
    code = ("import sys, apiserver.core, apiserver.webhooks, apiserver.strategies;"
            "assert 'celpy' not in sys.modules, 'imported at start';"
            "from apiserver import cel;"
            "assert cel.run('1 + 1 == 2', {}) is True;"
            "assert 'celpy' in sys.modules")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
