import contextlib

import keras
import numpy as np
import pytest

from hierlstm.config import RunConfig, named_sizes
from hierlstm.model.builders import build_model
from hierlstm.model.check import TOLERANCES, random_input, run_variant
from hierlstm.model.layers import NestedCell
from hierlstm.model.params import init_params, load_params, param_shapes, read_params
from hierlstm.model.reference import reference_forward
from hierlstm.registry import VARIANTS

OTHER_GEOMETRY = dict(height=40, pool_height=4, filters=8, kernel_size=5, inner_units=20)
# batch < time (at every size of the layers other than the default's), batch > time, equal,
# time 1, batch 1
SIZES = {
    "b2t5-geometry": RunConfig(batch_size=2, time_steps=5, outer_units=30, **OTHER_GEOMETRY),
    "b5t2": RunConfig(batch_size=5, time_steps=2),
    "b3t3": RunConfig(batch_size=3, time_steps=3),
    "b4t1": RunConfig(batch_size=4, time_steps=1),
    "b1t6": RunConfig(batch_size=1, time_steps=6),
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_variant_equals_numpy_reference(variant, size):
    config = SIZES[size].replace(variant=variant)
    params = init_params(config, seed=3)
    x = random_input(config, seed=3)
    output = run_variant(config, params, x)
    assert output.shape == (config.batch_size, config.time_steps, config.outer_units)
    expected = reference_forward(params, x, pool_height=config.pool_height)
    assert np.max(np.abs(output - expected)) <= TOLERANCES["float32"]


@pytest.mark.parametrize("chains", [1, 2])
def test_fused_under_xla_equals_the_reference_in_any_number_of_chains(chains, monkeypatch):
    from hierlstm.model import fused

    monkeypatch.setattr(fused, "chain_count", lambda: chains)
    # 2 chains: 1 and 2 of the batch
    config = RunConfig(variant="fused", batch_size=3, time_steps=4, xla=True)
    params = init_params(config, seed=3)
    x = random_input(config, seed=3)
    expected = reference_forward(params, x, pool_height=config.pool_height)
    assert np.max(np.abs(run_variant(config, params, x) - expected)) <= TOLERANCES["float32"]


@pytest.mark.parametrize(("device", "chains"), [("/CPU:0", 3), ("/GPU:0", 1), (None, 3)])
def test_fused_runs_in_chains_under_xla_on_a_cpu_only(device, chains, monkeypatch):
    import tensorflow as tf

    from hierlstm.model import fused

    monkeypatch.setattr(fused, "chain_count", lambda: 3)
    config = RunConfig(variant="fused", batch_size=3, time_steps=2)
    layer = [
        layer
        for layer in build_model(config).layers
        if isinstance(layer, fused.FusedHierarchicalLSTM)
    ][0]
    seen = []

    @tf.function(jit_compile=True)
    def traced():
        with tf.device(device) if device else contextlib.nullcontext():
            seen.append(layer.chains())

    traced.get_concrete_function()  # traced as XLA would compile it, never run
    assert seen == [chains]  # no GPU here: no device scope counts as a CPU


@pytest.mark.parametrize("precision", ["mixed_float16", "mixed_bfloat16"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_mixed_precision_stays_within_its_tolerance(variant, precision):
    config = RunConfig(variant=variant, batch_size=2, time_steps=4, precision=precision)
    params = init_params(config)
    x = random_input(config)
    output = run_variant(config, params, x)
    difference = np.max(np.abs(output - reference_forward(params, x)))
    assert difference <= TOLERANCES[precision]
    assert difference > TOLERANCES["float32"]  # it really ran in 16 bits


@pytest.mark.parametrize("variant", VARIANTS)
def test_params_round_trip_and_every_layer_is_named(variant):
    config = RunConfig(variant=variant, batch_size=2, time_steps=3)
    params = init_params(config, seed=7)
    model = build_model(config, params)
    back = read_params(model)
    assert set(back) == set(params)
    for name in params:
        np.testing.assert_array_equal(back[name], params[name])
    assert model.count_params() == sum(p.size for p in params.values())
    for layer in model._flatten_layers(include_self=False, recursive=True):
        assert not any(char.isdigit() for char in layer.name), layer.name  # no lstm_17


def test_init_params_keys_shapes_and_nonzero_biases():
    config = RunConfig()
    params = init_params(config)
    assert {name: value.shape for name, value in params.items()} == {
        "conv_kernel": (3, 3, 1, 16),
        "conv_bias": (16,),
        "inner_kernel": (16, 192),
        "inner_recurrent_kernel": (48, 192),
        "inner_bias": (192,),
        "outer_kernel": (48, 240),
        "outer_recurrent_kernel": (60, 240),
        "outer_bias": (240,),
    }
    assert param_shapes(config) == {name: value.shape for name, value in params.items()}
    for name, value in params.items():
        assert value.dtype == np.float32
        if name.endswith("bias"):
            assert np.all(value != 0)
    assert not np.array_equal(init_params(config, 1)["inner_kernel"], params["inner_kernel"])


def test_load_params_rejects_a_wrong_shape_by_name():
    config = RunConfig(batch_size=1, time_steps=2)
    params = dict(init_params(config))
    params["outer_bias"] = np.zeros(7, np.float32)
    with pytest.raises(ValueError, match=r"outer_bias has shape \(7,\) but the model expects"):
        load_params(build_model(config), params)


def test_nested_is_the_askers_nested_cell():
    model = build_model(RunConfig(variant="nested"))
    rnn = model.get_layer("nested_rnn")
    assert isinstance(rnn.cell, NestedCell)
    assert isinstance(rnn.cell.inner_lstm, keras.layers.RNN)
    assert isinstance(rnn.cell.outer_cell, keras.layers.LSTMCell)
    assert VARIANTS["nested"].chain(12, 50) == 50 * 12 + 50
    assert VARIANTS["folded"].chain(12, 50) == 12 + 50


def test_precision_policies_are_per_layer_and_independent():
    global_policy = keras.config.dtype_policy().name
    full = build_model(RunConfig(variant="folded", precision="float32"))
    half = build_model(RunConfig(variant="folded", precision="mixed_bfloat16"))
    assert keras.config.dtype_policy().name == global_policy == "float32"
    for layer in full.layers[1:]:
        assert layer.dtype_policy.name == "float32"
    for layer in half.layers[1:]:
        assert layer.dtype_policy.name == "mixed_bfloat16"
        assert layer.compute_dtype == "bfloat16" and layer.variable_dtype == "float32"
    x = np.zeros((1, 36, 2, 1), np.float32)
    assert full(x).dtype == "float32"
    assert half(x).dtype == "bfloat16"
    assert full(x).dtype == "float32"  # building and running the other changed nothing


def test_registry_records_are_complete():
    for name, variant in VARIANTS.items():
        assert variant.name == name
        assert variant.title() and len(variant.explanation(named_sizes(RunConfig()))) > 80
        assert isinstance(variant.can_use_cudnn, bool)
    assert not VARIANTS["nested"].can_use_cudnn and not VARIANTS["shared_cell"].can_use_cudnn
    assert VARIANTS["folded"].can_use_cudnn and VARIANTS["time_distributed"].static_time
    # nested's cell and fused's layer hold every LSTM; the others end in a keras.layers.LSTM
    assert [name for name, v in VARIANTS.items() if not v.has_lstm_layer] == ["nested", "fused"]


def test_the_registry_says_which_backends_each_variant_runs_on():
    from hierlstm.registry import BACKENDS, KERAS_BACKENDS, RUNTIMES, converts

    assert KERAS_BACKENDS == ("tensorflow", "jax", "torch")
    assert RUNTIMES == ("onnxruntime", "openvino") and BACKENDS == KERAS_BACKENDS + RUNTIMES
    # a portable variant runs on every Keras backend, and tf2onnx converts it for the runtimes
    portable = [name for name, v in VARIANTS.items() if v.backends == BACKENDS]
    assert portable == ["nested", "time_distributed", "folded", "shared_cell"]
    tensorflow_only = [name for name, v in VARIANTS.items() if v.backends == ("tensorflow",)]
    assert tensorflow_only == ["vectorized_map", "fused"]
    assert [name for name in VARIANTS if converts(name)] == portable
