"""hierlstm: build, trace and time a hierarchical LSTM in TensorFlow, in six variants that
compute one function from one set of parameters and differ only in how it runs. Names load on
first use, so `import hierlstm` does not pay TensorFlow's import time."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "RunConfig": "config",
    "PRECISIONS": "config",
    "VARIANTS": "registry",
    "Variant": "registry",
    "build_model": "model.builders",
    "init_params": "model.params",
    "load_params": "model.params",
    "param_shapes": "model.params",
    "read_params": "model.params",
    "reference_forward": "model.reference",
    "trace_shapes": "model.trace",
    "trace_report": "model.trace",
    "check_variants": "model.check",
    "audit": "yours.audit",  # a user's model: its recurrent layers' kernels, per backend
    "import_tensorflow_quietly": "_native",  # for scripts whose stderr is read
}

__all__ = sorted(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
