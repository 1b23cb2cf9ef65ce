import pytest

from hierlstm.config import RunConfig

BAD_VALUES = [
    ({"batch_size": -3}, "batch_size must be between 1 and 65536; got -3."),
    ({"batch_size": 10**9}, "batch_size must be between 1 and 65536; got 1000000000."),
    ({"batch_size": 2.5}, "batch_size must be a whole number; got 2.5."),
    ({"batch_size": True}, "batch_size must be a whole number; got True."),
    ({"time_steps": 0}, "time_steps must be between 1 and 100000; got 0."),
    ({"filters": 0}, "filters must be between 1 and 1024; got 0."),
    ({"kernel_size": 0}, "kernel_size must be between 1 and 15; got 0."),
    ({"pool_height": 0}, "pool_height must be between 1 and 512; got 0."),
    ({"inner_units": 0}, "inner_units must be between 1 and 2048; got 0."),
    ({"outer_units": 5000}, "outer_units must be between 1 and 2048; got 5000."),
    ({"xla": "yes"}, "xla must be true or false; got 'yes'."),
    ({"lstm_kernel": "cudnn"}, "lstm_kernel must be one of auto, generic; got 'cudnn'."),
    ({"device": "tpu"}, "device must be auto, cpu or gpu:N (N a GPU index); got 'tpu'."),
    ({"device": "gpu:x"}, "device must be auto, cpu or gpu:N"),
]


BAD_TEXT = [
    ({"batch_size": "abc"}, "batch_size must be a whole number between 1 and 65536; got 'abc'."),
    ({"time_steps": "1e3"}, "time_steps must be a whole number between 1 and 100000; got '1e3'."),
    ({"xla": "maybe"}, "xla must be true or false; got 'maybe'."),
    ({"colour": "red"}, "unknown setting 'colour'"),
    (
        {"backend": "mxnet"},
        "backend must be one of tensorflow, jax, torch, onnxruntime, openvino; got 'mxnet'",
    ),
    (
        {"variant": "fused", "backend": "jax"},
        "variant fused runs on tensorflow only (it calls TensorFlow itself); got backend 'jax'.",
    ),
]


# test_bad_input.py has height below the pool, variant, precision and the server's limits.
@pytest.mark.parametrize(
    "make, changes, message",
    [(lambda changes: RunConfig(**changes), *case) for case in BAD_VALUES]
    + [(RunConfig.from_strings, *case) for case in BAD_TEXT],
)
def test_a_bad_value_names_field_value_and_range_in_one_line(make, changes, message):
    with pytest.raises(ValueError) as error:
        make(changes)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_from_strings_round_trips_to_strings():
    config = RunConfig(variant="nested", batch_size=3, time_steps=7, xla=True, device="gpu:1")
    assert RunConfig.from_strings(config.to_strings()) == config
    on_jax = config.replace(backend="jax")
    assert RunConfig.from_strings(on_jax.to_strings()) == on_jax != config
    assert RunConfig.from_strings({"xla": "off", "batch_size": " 12 "}).batch_size == 12


def test_the_pooled_height_keeps_its_old_name_rows():
    config = RunConfig(height=40, pool_height=3)
    assert config.pooled_height == 13 == config.rows  # 40 // 3: the inner sub-sequence's steps
    assert config.replace(pool_height=5).rows == 8 == config.replace(pool_height=5).pooled_height


def test_defaults_are_the_source_question_geometry():
    config = RunConfig()
    assert (config.height, config.filters, config.kernel_size, config.pool_height) == (36, 16, 3, 3)
    assert (config.inner_units, config.outer_units, config.pooled_height) == (48, 60, 12)
    assert hash(config) == hash(RunConfig())  # usable as a cache key
