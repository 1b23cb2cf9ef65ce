"""hierlstm: build, trace and time a hierarchical LSTM in TensorFlow, in several execution
strategies that compute one function from one set of parameters."""

from hierlstm.config import PRECISIONS, RunConfig
from hierlstm.params import init_params, load_params, param_shapes, read_params
from hierlstm.reference import reference_forward
from hierlstm.variants import VARIANTS, Variant, build_model

__all__ = [
    "PRECISIONS",
    "RunConfig",
    "VARIANTS",
    "Variant",
    "build_model",
    "init_params",
    "load_params",
    "param_shapes",
    "read_params",
    "reference_forward",
]
