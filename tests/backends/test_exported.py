"""A runtime profile's nodes given to the model's layers by their names (tf2onnx keeps Keras's name
scopes; the rewriter's fused ops follow their layer's nodes), and the run's thread setting."""

import pytest

from hierlstm.backends.exported import intra_op_threads, node_tables
from hierlstm.model.export import node_layers
from hierlstm.profiling.record import OUTSIDE

LAYERS = ["conv", "pool", "inner_lstm", "outer_lstm"]


def test_a_node_is_the_layer_its_scope_names_else_the_one_before_it():
    names = [
        "Reshape__3",  # before any layer's node: outside
        "folded_1/conv_1/BiasAdd",
        "folded_1/pool_1/MaxPool2d",
        "folded_1/inner_lstm_1/transpose",
        "LSTM__51",  # tf2onnx's fused op: the inner LSTM, whose nodes it follows
        "folded_1/outer_lstm_1/zeros",
        "LSTM__72",
        "folded_1/pool_like_1/x",  # a scope that only starts like a layer's name is not it
    ]
    assert node_layers(names, LAYERS, OUTSIDE) == [
        OUTSIDE,
        "conv",
        "pool",
        "inner_lstm",
        "inner_lstm",
        "outer_lstm",
        "outer_lstm",
        "outer_lstm",
    ]


def test_the_tables_are_per_step_in_the_model_s_order_and_sum_to_the_same_time():
    timed = [
        ("folded_1/conv_1/BiasAdd", "Conv", 0.004),
        ("folded_1/inner_lstm_1/t", "Transpose", 0.001),
        ("LSTM__51", "LSTM", 0.006),
        ("folded_1/outer_lstm_1/t", "Transpose", 0.001),
        ("LSTM__72", "LSTM", 0.010),
    ]
    tables = node_tables(timed, LAYERS, steps=2)
    layers = {row["layer"]: row for row in tables["layers"]}
    assert list(layers) == ["conv", "inner_lstm", "outer_lstm"]
    assert layers["inner_lstm"]["time_s"] == pytest.approx(0.0035) and layers["conv"]["ops"] == 1
    kinds = [(row["type"], row["time_s"], row["ops"]) for row in tables["op_types"]]
    assert kinds == [("LSTM", pytest.approx(0.008), 2), ("Conv", 0.002, 1), ("Transpose", 0.001, 2)]
    for rows in (tables["layers"], tables["op_types"]):
        assert sum(row["share"] for row in rows) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("environment", "threads"),
    [
        ({}, 0),
        ({"OMP_NUM_THREADS": "2"}, 2),
        ({"TF_NUM_INTRAOP_THREADS": "3"}, 3),
        ({"OMP_NUM_THREADS": "x", "TF_NUM_INTRAOP_THREADS": "1"}, 1),
    ],
)
def test_a_runtime_takes_the_threads_every_worker_of_the_run_takes(
    monkeypatch, environment, threads
):
    for name in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert intra_op_threads() == threads


def test_openvino_computes_a_float32_model_in_float32_on_any_cpu():
    """OpenVINO's CPU plugin computes in bfloat16 by default where the CPU has it: the runner
    asks for float32, and the compiled model says it will compute in it."""
    import numpy as np
    import openvino
    from openvino import opset13

    from hierlstm.backends.runners.openvino import compile_settings

    inputs = opset13.parameter([1, 4], np.float32)
    weights = opset13.constant(np.full((4, 3), 0.1, np.float32))
    model = openvino.Model([opset13.matmul(inputs, weights, False, False)], [inputs])
    compiled = openvino.Core().compile_model(model, "CPU", compile_settings(1))
    assert compiled.get_property("INFERENCE_PRECISION_HINT") == openvino.Type.f32
