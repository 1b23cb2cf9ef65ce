"""The GPU-only behaviours besides the kernel rule, checked as a CPU can: the precision cuDNN
runs in, traced as on a GPU; GPU memory set before TensorFlow's runtime starts (a fresh process
listing a GPU); the device strings of a mirrored strategy over two GPUs."""

import importlib
import json

import pytest
import tensorflow as tf
from factories import python

from hierlstm.config import PRECISIONS, TASKS, RunConfig
from hierlstm.distributed import distribute
from hierlstm.model.builders import build_model
from hierlstm.model.training import TrainingStep
from hierlstm.timing import harness

KERAS_RNN = importlib.import_module("keras.src.backend.tensorflow.rnn")
TINY = RunConfig(variant="folded", batch_size=2, time_steps=3, height=6, pool_height=3)
COMPUTE_DTYPE = {"float32": tf.float32, "mixed_float16": tf.float16, "mixed_bfloat16": tf.bfloat16}


def _cudnn_nodes(concrete_function):
    graph_def = concrete_function.graph.as_graph_def()
    nodes = list(graph_def.node)
    for function in graph_def.library.function:
        nodes.extend(function.node_def)
    return [node for node in nodes if node.op.startswith("CudnnRNN")]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("precision", PRECISIONS)
def test_cudnn_runs_in_the_compute_dtype_of_the_precision(monkeypatch, precision, task):
    """Under a mixed policy the LSTM computes in 16 bits, so cuDNN's kernel is asked for in
    half or bfloat16 (whether a GPU has a bfloat16 cuDNN RNN kernel is for a real GPU to say:
    benchmarks/model/gpu_check.sh checks mixed_bfloat16)."""
    monkeypatch.setattr(KERAS_RNN, "_is_gpu_available", lambda: True)
    config = TINY.replace(precision=precision, task=task)
    model = build_model(config)
    if task == "inference":
        function = harness.make_forward(model, config).get_concrete_function()
    else:
        function = TrainingStep(model, config).step.get_concrete_function()
    nodes = _cudnn_nodes(function)
    ops = {node.op for node in nodes}
    assert "CudnnRNNV3" in ops and ("CudnnRNNBackpropV3" in ops) is (task == "training")
    assert {tf.dtypes.as_dtype(node.attr["T"].type) for node in nodes} == {COMPUTE_DTYPE[precision]}


# TensorFlow refuses `set_memory_growth` once its runtime has started (then one process maps
# every GPU's memory): a fresh process lists a fake GPU and records whether it had, at each call.
_MEMORY_PROBE = """
import json, sys
from hierlstm._native import import_tensorflow_quietly
tf = import_tensorflow_quietly()
from tensorflow.python.eager import context

fake = tf.config.PhysicalDevice("/physical_device:GPU:0", "GPU")
real_list = tf.config.list_physical_devices
calls = []

def list_physical_devices(kind=None):
    return [fake] if kind == "GPU" and not calls else real_list(kind)

def set_memory_growth(device, enable):
    calls.append({"device": device.name, "enable": enable,
                  "runtime_started": context.context()._context_handle is not None})

tf.config.list_physical_devices = list_physical_devices
tf.config.experimental.set_memory_growth = set_memory_growth
{run}
print(json.dumps(calls))
"""
_RUN_CLI = """
from hierlstm.cli.main import main
status = main(["bench", "--variant", "folded", "--batch-size", "1", "--time-steps", "2",
               "--warmup", "0", "--repeats", "1", "--db", sys.argv[1]])
assert status == 0, status
"""
_RUN_WARMUP = """
from hierlstm.app.server import warmup
for step in warmup.steps_for("trace"):
    step.run()
"""


@pytest.mark.parametrize("who, run", [("cli", _RUN_CLI), ("app warm-up", _RUN_WARMUP)])
def test_gpu_memory_growth_is_set_before_the_runtime_starts(tmp_path, who, run):
    probe = _MEMORY_PROBE.replace("{run}", run)
    completed = python("-c", probe, tmp_path / "r.sqlite3", timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    calls = json.loads(completed.stdout.strip().splitlines()[-1])
    assert calls == [
        {"device": "/physical_device:GPU:0", "enable": True, "runtime_started": False}
    ], who


def test_a_mirrored_strategy_over_two_gpus_gets_their_full_device_names(monkeypatch):
    names = [f"/job:localhost/replica:0/task:0/device:GPU:{index}" for index in range(2)]
    monkeypatch.setattr(distribute, "local_devices", lambda kind: names if kind == "GPU" else [])
    config = TINY.replace(batch_size=4, strategy="mirrored", devices="gpu:0,gpu:1")
    strategy = distribute.make_strategy(config)
    assert tuple(strategy.extended.worker_devices) == tuple(names)
    assert int(strategy.num_replicas_in_sync) == 2
    assert [distribute.short_name(name) for name in names] == ["/GPU:0", "/GPU:1"]
    with pytest.raises(ValueError, match=r"devices names gpu:2, but this process sees 2 GPU"):
        distribute.make_strategy(config.replace(devices="gpu:0,gpu:2"))
