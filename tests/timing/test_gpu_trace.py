"""Every variant traced as a GPU traces it: Keras's one GPU check (`_is_gpu_available`, which
decides whether an LSTM emits cuDNN's ops) answers yes, nothing else faked. A CPU has no kernel
for `CudnnRNNV3`: graphs holding one are traced, never run; XLA's hold none and also run."""

import importlib

import pytest
import tensorflow as tf

from hierlstm.cli import doctor
from hierlstm.cli.main import main
from hierlstm.config import PRECISIONS, TASKS, RunConfig, Timing
from hierlstm.distributed import distribute
from hierlstm.i18n import t
from hierlstm.model import cudnn
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.model.training import TrainingStep
from hierlstm.records import PHASES
from hierlstm.registry import VARIANTS
from hierlstm.timing import harness, lstm_kernel, make_inputs

# The module itself: `keras.src.backend.tensorflow` exports a function named `rnn` that shadows
# the module of that name, so `import ... .rnn as m` would give the function.
KERAS_RNN = importlib.import_module("keras.src.backend.tensorflow.rnn")

TINY = RunConfig(
    variant="folded", batch_size=2, time_steps=3, height=6, filters=2, pool_height=3,
    inner_units=4, outer_units=5,
)  # fmt: skip
# Which variants' graphs hold cuDNN's kernel on a GPU without XLA: every keras.layers.LSTM
# (the outer LSTM of all but nested and fused, and the summariser of three).
CUDNN_WITHOUT_XLA = {
    "nested": False,
    "time_distributed": True,
    "folded": True,
    "vectorized_map": True,
    "shared_cell": True,
    "fused": False,
}


@pytest.fixture
def as_on_a_gpu(monkeypatch):
    monkeypatch.setattr(KERAS_RNN, "_is_gpu_available", lambda: True)


def test_the_patch_reaches_the_check_keras_asks():
    assert KERAS_RNN.__name__ == "keras.src.backend.tensorflow.rnn"
    assert callable(KERAS_RNN._is_gpu_available) and KERAS_RNN._is_gpu_available() is False


def traced(config: RunConfig) -> dict:
    """The concrete functions the harness runs for `config`, traced and not run: the forward
    function (`harness.make_forward`) or a training step's four (`TrainingStep`)."""
    model = build_model(config, init_params(config, 0))
    if config.task == "inference":
        return {"forward": harness.make_forward(model, config).get_concrete_function()}
    step = TrainingStep(model, config)
    return {
        name: getattr(step, name).get_concrete_function()
        for name in ("step", "forward", "forward_backward", "update")
    }


def expected_reason(config: RunConfig) -> str:
    if not VARIANTS[config.variant].has_lstm_layer:
        return t("kernel.why.cell", "en")
    return t("kernel.why.xla", "en")


# Every variant with and without XLA, for each task, at float32; mixed_float16 (whose casts
# wrap each layer's call) on folded, whose outer LSTM is a keras.layers.LSTM as in three others.
CASES = [
    (variant, xla, task, precision)
    for variant in VARIANTS
    for xla in (False, True)
    for task in TASKS
    for precision in PRECISIONS[:2]
    if precision == "float32" or variant == "folded"
]


@pytest.mark.parametrize("variant, xla, task, precision", CASES)
def test_no_cudnn_kernel_inside_xla_when_traced_as_on_a_gpu(
    as_on_a_gpu, variant, xla, task, precision
):
    config = TINY.replace(variant=variant, xla=xla, task=task, precision=precision)
    functions = traced(config)
    for name, function in functions.items():
        assert cudnn.cudnn_ops_under_xla(function) == [], name
    cudnn_expected = CUDNN_WITHOUT_XLA[variant] and not xla
    main_function = functions["step" if task == "training" else "forward"]
    op_types = cudnn.graph_op_types(main_function)
    assert cudnn.ran_cudnn(op_types) is cudnn_expected
    if task == "training":
        assert cudnn.ran_cudnn_training(op_types) is cudnn_expected
        assert any(op.startswith("CudnnRNNBackprop") for op in op_types) is cudnn_expected
    # The harness's detection and stored reason agree with the graph.
    kernel, reason = lstm_kernel(config, main_function)
    if cudnn_expected:
        assert (kernel, reason) == ("cudnn", "")
    else:
        assert (kernel, reason) == ("generic", expected_reason(config))


def test_the_checker_finds_a_cudnn_kernel_inside_xla(as_on_a_gpu):
    """The check above can fail: an LSTM asked for cuDNN ("auto", as before the rule) inside a
    jit-compiled function, directly and nested in a plain one, is found; outside, it is not."""
    lstm = tf.keras.layers.LSTM(4, use_cudnn="auto")
    spec = tf.TensorSpec((2, 3, 5), tf.float32)
    compiled = tf.function(lambda x: lstm(x), jit_compile=True)
    plain = tf.function(lambda x: lstm(x))
    outer = tf.function(lambda x: compiled(x) + 1.0)
    assert cudnn.cudnn_ops_under_xla(compiled.get_concrete_function(spec)) == ["CudnnRNNV3"]
    assert cudnn.cudnn_ops_under_xla(outer.get_concrete_function(spec)) == ["CudnnRNNV3"]
    assert cudnn.cudnn_ops_under_xla(plain.get_concrete_function(spec)) == []
    assert cudnn.ran_cudnn(cudnn.graph_op_types(plain.get_concrete_function(spec)))


def test_every_lstm_argument_follows_the_rule():
    auto, generic = TINY, TINY.replace(lstm_kernel="generic")
    assert cudnn.use_cudnn_argument(auto) == "auto"
    assert cudnn.use_cudnn_argument(auto.replace(xla=True)) is False
    assert cudnn.use_cudnn_argument(auto.replace(device="cpu")) is False
    assert cudnn.use_cudnn_argument(generic) is False


def test_the_reason_under_xla_is_one_sentence_in_both_languages():
    config = TINY.replace(xla=True)
    key = cudnn.refusal(config, cuda_build=True, gpu_visible=True)
    assert key == "kernel.why.xla"
    for lang in ("en", "zh"):
        assert t(key, lang).count("XLA") >= 2 and "\n" not in t(key, lang)
    # Without a GPU, the GPU is the reason: XLA would not change the kernel.
    assert cudnn.refusal(config, cuda_build=True, gpu_visible=False) == "kernel.why.no_gpu"
    assert cudnn.refusal(config, cuda_build=False, gpu_visible=True) == "kernel.why.no_cuda"
    assert cudnn.refusal(config.replace(lstm_kernel="generic"), cuda_build=True, gpu_visible=True)
    assert cudnn.refusal(TINY, cuda_build=True, gpu_visible=True) == ""


# --- what the app and the CLI run: the harness, the training step, doctor's probe ----------


@pytest.mark.parametrize("task", TASKS)
def test_the_harness_runs_xla_as_a_gpu_would_trace_it(as_on_a_gpu, task):
    """Run, not only traced: XLA:CPU, like XLA:GPU, has no kernel for `CudnnRNNV3`."""
    config = TINY.replace(xla=True, task=task)
    result = harness.benchmark(config, Timing(warmup=0, repeats=2))
    assert result.status == "ok", result.error
    assert (result.kernel, result.kernel_reason) == ("generic", t("kernel.why.xla", "en"))
    assert set(result.phases) == (set(PHASES) if task == "training" else set())
    assert all(len(stats.samples) == 2 for stats in result.phases.values())


def test_the_cli_bench_under_xla_as_on_a_gpu(as_on_a_gpu, capsys, tmp_path):
    status = main(
        ["bench", "--variant", "folded", "--variant", "shared_cell", "--xla", "--batch-size", "2",
         "--time-steps", "3", "--warmup", "0", "--repeats", "1", "--json",
         "--db", str(tmp_path / "r.sqlite3")]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert '"kernel": "generic"' in out and t("kernel.why.xla", "en") in out


@pytest.mark.parametrize("device", ["gpu:0", "cpu"])
def test_doctor_probe_traces_cleanly_as_on_a_gpu(as_on_a_gpu, device):
    """doctor probes every device; on the GPU, XLA takes the generic kernel and the rest cuDNN;
    on the CPU of a GPU machine, every run is pinned to the generic kernel."""
    configs = doctor.probe_configs(device)
    assert any(config.xla for config in configs)
    assert any(config.task == "training" for config in configs)
    for config in configs:
        functions = traced(config)
        for name, function in functions.items():
            assert cudnn.cudnn_ops_under_xla(function) == [], (config, name)
        ops = cudnn.graph_op_types(functions["step" if config.task == "training" else "forward"])
        assert cudnn.ran_cudnn(ops) is (device != "cpu" and not config.xla), config


@pytest.mark.parametrize("xla", [False, True])
def test_a_replicated_forward_keeps_cudnn_out_of_xla_as_on_a_gpu(as_on_a_gpu, xla):
    """Under a strategy the per-replica function is the jit-compiled one, nested inside a plain
    step: the checker follows the call."""
    config = TINY.replace(xla=xla)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        model = build_model(config, init_params(config, 0))
    replicated = distribute.ReplicatedForward(strategy, model, xla=xla)
    inputs = distribute.distribute_inputs(strategy, make_inputs(config), config.batch_size)
    concrete = replicated.step.get_concrete_function(inputs)
    assert cudnn.cudnn_ops_under_xla(concrete) == []
    assert cudnn.ran_cudnn(cudnn.graph_op_types(concrete)) is not xla


@pytest.mark.parametrize("variant", ["nested", "folded", "shared_cell"])
@pytest.mark.parametrize("xla", [False, True])
def test_the_apps_kernel_table_agrees_with_the_traced_graph(as_on_a_gpu, monkeypatch, variant, xla):
    """The Benchmark page's per-LSTM table on a GPU machine: cuDNN where the traced graph has it;
    under XLA every keras.layers.LSTM says why not, and cells say they never take it."""
    import dataclasses

    from factories import make_result

    from hierlstm.app import display

    report = dataclasses.replace(
        display.cached_device_report(), cuda_build=True, gpus=("a GPU",)
    )  # only their truth is read
    monkeypatch.setattr(display, "cached_device_report", lambda: report)
    config = TINY.replace(variant=variant, xla=xla)
    kernel, reason = lstm_kernel(config, traced(config)["forward"])
    rows = display.lstm_kernel_rows(
        [make_result(config=config, kernel=kernel, kernel_reason=reason)]
    )
    ran = dict(zip(rows[t("kernel.col.lstm", "en")], rows[t("kernel.col.ran", "en")], strict=True))
    why = dict(zip(rows[t("kernel.col.lstm", "en")], rows[t("kernel.col.why", "en")], strict=True))
    kinds = dict(
        zip(rows[t("kernel.col.lstm", "en")], rows[t("kernel.col.kind", "en")], strict=True)
    )
    assert ran, rows
    for path, kind in kinds.items():
        if kind == t("kernel.kind.cell", "en"):
            assert (ran[path], why[path]) == ("generic", t("kernel.why.cell", "en"))
        elif xla:
            assert (ran[path], why[path]) == ("generic", t("kernel.why.xla", "en"))
        else:
            assert (ran[path], why[path]) == ("cudnn", t("kernel.why.cudnn", "en"))
    assert ("outer_lstm" in ran) is VARIANTS[variant].has_lstm_layer
