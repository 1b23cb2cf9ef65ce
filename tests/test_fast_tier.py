"""The fast tier (`make test-fast`, HIERLSTM_TESTS=fast): a pure module's tests run without
TensorFlow, and the full tier still imports it once, before any test."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = (
    "import sys, pytest; "
    "status = pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_config.py']); "
    "print('tensorflow' in sys.modules); sys.exit(status)"
)


@pytest.mark.parametrize("tier, tensorflow", [("fast", "False"), ("", "True")])
def test_tensorflow_is_imported_only_where_a_test_needs_it(tier, tensorflow):
    env = {**os.environ, "HIERLSTM_TESTS": tier}
    completed = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env
    )
    assert completed.returncode == 0, completed.stdout[-2000:]
    assert completed.stdout.strip().splitlines()[-1] == tensorflow
