"""hierlstm: build, trace and time a hierarchical LSTM in TensorFlow, in several execution
strategies that compute one function from one set of parameters.

Names are loaded on first use, so `import hierlstm` (and `python -m hierlstm --help`) does not
pay TensorFlow's import time until something needs it.
"""

import importlib

_EXPORTS = {
    "RunConfig": "hierlstm.config",
    "PRECISIONS": "hierlstm.config",
    "VARIANTS": "hierlstm.variants",
    "Variant": "hierlstm.variants",
    "build_model": "hierlstm.variants",
    "init_params": "hierlstm.params",
    "load_params": "hierlstm.params",
    "param_shapes": "hierlstm.params",
    "read_params": "hierlstm.params",
    "reference_forward": "hierlstm.reference",
    "trace_shapes": "hierlstm.trace",
    "trace_report": "hierlstm.trace",
    "check_variants": "hierlstm.check",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hierlstm' has no attribute {name!r}")
