"""The fast tier (`make test-fast`, HIERLSTM_TESTS=fast): a pure module's tests run without
TensorFlow, and the full tier still imports it once, before any test."""

import os

import pytest
from factories import python

CODE = (
    "import sys, pytest; "
    "status = pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_config.py']); "
    "print('tensorflow' in sys.modules); sys.exit(status)"
)


@pytest.mark.parametrize("tier, tensorflow", [("fast", "False"), ("", "True")])
def test_tensorflow_is_imported_only_where_a_test_needs_it(tier, tensorflow):
    env = {**os.environ, "HIERLSTM_TESTS": tier}
    completed = python("-c", CODE, timeout=300, env=env)
    assert completed.returncode == 0, completed.stdout[-2000:]
    assert completed.stdout.strip().splitlines()[-1] == tensorflow
