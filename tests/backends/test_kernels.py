"""The kernel readers on programs and op lists shaped like a GPU's (a CPU's real ones are in
test_oracles), the per-backend cuDNN rules in their order, and `missing`; no backend needed."""

import importlib.util
import sys

import pytest

from hierlstm.backends import kernels, missing
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.model.cudnn import RULES, use_cudnn_argument
from hierlstm.registry import KERAS_BACKENDS

# What jaxlib's cuDNN lowering emits (jaxlib/gpu_rnn.py), trimmed: StableHLO from `lower()`,
# HLO from `compile().as_text()`.
STABLEHLO = """
func.func public @main(%arg0: tensor<8x12x16xf32>) -> tensor<8x12x48xf32> {
  %0:4 = stablehlo.custom_call @cudnn_rnn_ffi(%arg0, %1, %2, %3, %4) {api_version = 4 : i32,
    backend_config = {opaque = "..."}} : (tensor<8x12x16xf32>) -> tensor<8x12x48xf32>
"""
HLO_TRAINING = """
  %custom-call.1 = (f32[8,12,48]{2,1,0}, f32[1,8,48]) custom-call(f32[8,12,16] %p0),
    custom_call_target="cudnn_rnn_ffi", api_version=API_VERSION_TYPED_FFI
  %custom-call.2 = (f32[8,12,16]{2,1,0}) custom-call(f32[8,12,48] %g),
    custom_call_target="cudnn_rnn_bwd_ffi", output_to_operand_aliasing={{3}: (9, {})}
"""
GENERIC = "%1 = stablehlo.while(%iterArg = %0) ... stablehlo.logistic ... stablehlo.dot_general"


def test_the_jax_reader_finds_cudnns_custom_calls():
    assert kernels.jax_cudnn_calls(STABLEHLO) == {"forward": 1, "backward": 0}
    assert kernels.jax_cudnn_calls(HLO_TRAINING) == {"forward": 1, "backward": 1}
    assert kernels.jax_cudnn_calls(GENERIC) == {"forward": 0, "backward": 0}
    assert kernels.jax_cudnn_calls(STABLEHLO.replace("cudnn", "hipdnn"))["forward"] == 1
    assert kernels.ran_cudnn_jax(STABLEHLO) and not kernels.ran_cudnn_jax(GENERIC)
    # a training step ran cuDNN only when its backward did too
    assert kernels.ran_cudnn_jax(HLO_TRAINING, training=True)
    assert not kernels.ran_cudnn_jax(STABLEHLO, training=True)
    assert not kernels.ran_cudnn_jax("@cudnn_rnn_ffix @my_cudnn_rnn_ffi_2")  # whole names only


def test_the_torch_reader_finds_cudnns_ops():
    gpu = {"aten::lstm", "aten::_cudnn_rnn", "aten::_cudnn_rnn_flatten_weight"}
    gpu_training = gpu | {"CudnnRnnBackward0", "aten::_cudnn_rnn_backward"}
    cpu = {"aten::matmul", "aten::sigmoid", "aten::tanh", "aten::chunk", "aten::mul"}
    assert kernels.ran_cudnn_torch(gpu) and kernels.ran_cudnn_torch(gpu_training, training=True)
    assert not kernels.ran_cudnn_torch(gpu, training=True)
    assert not kernels.ran_cudnn_torch(cpu) and not kernels.ran_cudnn_torch({"aten::lstm"})


GPU = {"cuda_build": True, "gpu_visible": True}


@pytest.mark.parametrize("backend", KERAS_BACKENDS)
def test_each_backends_rule_in_its_order(backend):
    rule, suffix = RULES[backend], {"tensorflow": "", "jax": "_jax", "torch": "_torch"}[backend]
    folded = RunConfig(variant="folded")
    assert rule(folded, **GPU) == ""  # a GPU, the defaults: cuDNN
    # the order: a cell before everything, then the generic kernel asked for, the build, the GPU
    assert rule(RunConfig(variant="nested"), cuda_build=False, gpu_visible=False) == (
        "kernel.why.cell"
    )
    assert rule(folded, **GPU, cell=True) == "kernel.why.cell"
    generic = folded.replace(lstm_kernel="generic")
    assert rule(generic, cuda_build=False, gpu_visible=False) == "kernel.why.requested"
    assert rule(folded, cuda_build=False, gpu_visible=False) == f"kernel.why.no_cuda{suffix}"
    assert rule(folded, cuda_build=True, gpu_visible=False) == f"kernel.why.no_gpu{suffix}"
    assert rule(folded.replace(device="cpu"), **GPU) == "kernel.why.requested"
    # XLA refuses cuDNN on TensorFlow only: JAX is always XLA, PyTorch has none
    xla = rule(folded.replace(xla=True), **GPU)
    assert xla == ("kernel.why.xla" if backend == "tensorflow" else "")
    assert use_cudnn_argument(folded.replace(xla=True), backend) == (
        False if backend == "tensorflow" else "auto"
    )


def test_a_mask_and_torchs_tracing_are_their_own_reasons():
    folded = RunConfig(variant="folded")
    assert RULES["jax"](folded, **GPU, masked=True) == "kernel.why.masked"
    assert RULES["torch"](folded, **GPU, masked=True) == "kernel.why.masked"
    assert RULES["torch"](folded, **GPU, compiling=True) == "kernel.why.compiling"
    # the earlier reasons still come first, the mask before tracing
    assert RULES["torch"](folded, **GPU, masked=True, compiling=True) == "kernel.why.masked"
    assert RULES["torch"](folded, cuda_build=True, gpu_visible=False, compiling=True) == (
        "kernel.why.no_gpu_torch"
    )
    with pytest.raises(TypeError):
        RULES["jax"](folded, **GPU, compiling=True)  # JAX has no such condition


def test_every_reason_is_in_the_catalogue_in_both_languages():
    keys = {"masked", "compiling", "no_cuda_jax", "no_gpu_jax", "no_cuda_torch", "no_gpu_torch"}
    for key in keys:
        english, chinese = t(f"kernel.why.{key}", "en"), t(f"kernel.why.{key}", "zh")
        assert english and chinese and english != chinese and "cuDNN" in english + chinese


def test_lstm_kernel_says_cudnn_when_it_ran_and_the_rules_reason_when_not(monkeypatch):
    monkeypatch.setattr(kernels, "backend_facts", lambda backend: dict(GPU))
    folded = RunConfig(variant="folded")
    assert kernels.lstm_kernel(folded, "jax", ran=True) == ("cudnn", "")
    # cuDNN possible by the rule but absent from what ran: Keras's own fallback
    assert kernels.lstm_kernel(folded, "jax", ran=False) == ("generic", t("kernel.why.other"))
    assert kernels.lstm_kernel(folded, "torch", ran=False, compiling=True) == (
        "generic",
        t("kernel.why.compiling"),
    )


def test_missing_names_the_package_and_the_install_without_importing_it(monkeypatch):
    assert missing("jax") is None and missing("torch") is None
    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "jaxlib" else found(name)
    )
    message = missing("jax")
    assert message == (
        "the jax backend needs the jaxlib package, which is not installed here: run make run "
        "BACKENDS=1, or pip install -r requirements-backends.txt."
    )
    with pytest.raises(
        ValueError,
        match="backend must be one of tensorflow, jax, torch, onnxruntime, openvino; got",
    ):
        missing("mxnet")


def test_missing_imports_no_backend():
    was_loaded = {name: name in sys.modules for name in ("jax", "torch")}
    missing("jax"), missing("torch")
    assert {name: name in sys.modules for name in ("jax", "torch")} == was_loaded
