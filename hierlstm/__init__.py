"""hierlstm: build, trace and time a hierarchical LSTM in TensorFlow, in several execution
strategies that compute one function from one set of parameters. Names load on first use, so `import
hierlstm` does not pay TensorFlow's import time."""

import importlib

_EXPORTS = {
    "RunConfig": "hierlstm.config",
    "PRECISIONS": "hierlstm.config",
    "VARIANTS": "hierlstm.registry",
    "Variant": "hierlstm.registry",
    "build_model": "hierlstm.model.builders",
    "init_params": "hierlstm.model.params",
    "load_params": "hierlstm.model.params",
    "param_shapes": "hierlstm.model.params",
    "read_params": "hierlstm.model.params",
    "reference_forward": "hierlstm.model.reference",
    "trace_shapes": "hierlstm.model.trace",
    "trace_report": "hierlstm.model.trace",
    "check_variants": "hierlstm.model.check",
    "import_tensorflow_quietly": "hierlstm._native",  # for scripts whose stderr is read
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'hierlstm' has no attribute {name!r}")
