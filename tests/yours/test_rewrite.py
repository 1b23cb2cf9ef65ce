"""The answer's advice applied: RNN(LSTMCell)/RNN(GRUCell) become LSTM/GRU and TimeDistributed(LSTM)
one folded call, with the original's weights; outputs and gradients match in float32; the rewrite
takes cuDNN on the traced graph, saves, loads and is timed beside the original."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from hierlstm.yours import audit, examples, load, rewrite, verify

SIZES = {"batch": 2, "time": 3}


def answer_recipe() -> keras.Model:
    """RNN(LSTMCell) summarising each frame inside TimeDistributed over an unknown length, then a
    Bidirectional RNN(GRUCell), then a nested model with an RNN(LSTMCell)."""
    frames = keras.Input((None, 5, 4), name="frames")  # (B, T, 5, 4)
    cell = keras.layers.RNN(keras.layers.LSTMCell(6), name="summary")
    x = keras.layers.TimeDistributed(cell, name="summarise")(frames)  # (B, T, 6)
    gru = keras.layers.RNN(keras.layers.GRUCell(3), return_sequences=True, name="gru")
    x = keras.layers.Bidirectional(gru, name="both")(x)  # (B, T, 6)
    inner = keras.Sequential(
        [keras.Input((None, 6)), keras.layers.RNN(keras.layers.LSTMCell(4), name="last")],
        name="head",
    )
    return keras.Model(frames, inner(x), name="recipe")


@pytest.fixture(scope="module")
def rewritten():
    original = answer_recipe()
    new, changes = rewrite.rewrite(original)
    return original, new, changes


def test_the_mechanical_changes_are_made(rewritten):
    _, _, changes = rewritten
    assert [(c.path, c.before, c.after) for c in changes] == [
        ("summarise", "TimeDistributed(RNN(LSTMCell))", "FoldedTimeDistributed(LSTM)"),
        ("both", "Bidirectional(RNN(GRUCell))", "Bidirectional(GRU)"),
        ("head/last", "RNN(LSTMCell)", "LSTM"),
    ]


def test_outputs_and_gradients_match(rewritten):
    original, new, _ = rewritten
    shapes = audit.audit(original, SIZES).input_shapes
    result = rewrite.check(original, new, shapes)
    assert result.matches, result.to_dict()
    assert result.output_diff < 1e-5 and result.gradient_diff < 1e-4


def test_the_check_can_fail(rewritten):
    original, new, _ = rewritten
    shapes = audit.audit(original, SIZES).input_shapes
    changed = keras.models.clone_model(new)
    weights = new.get_weights()
    changed.set_weights([weights[0] + 0.1, *weights[1:]])
    assert not rewrite.check(original, changed, shapes).matches


def test_the_rewrite_takes_cudnn_on_the_traced_graph(rewritten):
    original, new, _ = rewritten
    before = audit.audit(original, SIZES)
    after = audit.audit(new, SIZES)
    assert {row.kernels["tensorflow"].kernel for row in before.recurrent} == {"generic"}
    assert {row.kernels["tensorflow"].kernel for row in after.recurrent} == {"cudnn"}
    assert verify.verify(new, after).agrees
    assert "yours.pitfall.td_unknown" not in [m.key for m in after.pitfalls]


def test_the_saved_rewrite_loads_and_computes_the_same(rewritten, tmp_path):
    original, new, _ = rewritten
    path = tmp_path / "rewritten.keras"
    new.save(path)
    loaded, _info = load.load_model_file(path)
    inputs = verify.sample_inputs(original, [(2, 3, 5, 4)])[0]
    np.testing.assert_allclose(loaded(inputs), original(inputs), rtol=1e-4, atol=1e-5)


def test_a_row_by_row_layer_is_folded_too_and_escapes_the_unknown_length_path(tmp_path):
    """TimeDistributed(Dense) over an unknown length, traced so, maps over the batch axis: a
    wrong shape. Its folded rewrite saves, loads, and gives the right one."""
    inputs = keras.Input((None, 5), name="frames")  # (B, T, 5)
    original = keras.Model(inputs, keras.layers.TimeDistributed(keras.layers.Dense(3))(inputs))
    new, changes = rewrite.rewrite(original)
    assert [(c.before, c.after) for c in changes] == [
        ("TimeDistributed(Dense)", "FoldedTimeDistributed(Dense)")
    ]
    new.save(tmp_path / "rewritten.keras")
    loaded, _info = load.load_model_file(tmp_path / "rewritten.keras")
    spec = tf.TensorSpec((None, None, 5), tf.float32)
    x = np.random.default_rng(0).standard_normal((2, 7, 5)).astype(np.float32)
    assert tuple(tf.function(original, input_signature=[spec])(x).shape) == (2, 2, 3)
    traced = tf.function(loaded, input_signature=[spec])(x)
    np.testing.assert_allclose(traced, original(x), rtol=1e-5, atol=1e-6)  # (2, 7, 3)


def test_both_are_timed_in_interleaved_rounds(rewritten):
    original, new, _ = rewritten
    timing = rewrite.bench(original, new, [(2, 3, 5, 4)], repeats=2)
    assert set(timing.samples) == {
        (model, phase) for model in ("original", "rewritten") for phase in ("forward", "step")
    }
    assert all(len(times) == 2 and min(times) > 0 for times in timing.samples.values())
    assert set(timing.to_dict()) == {"original/forward", "original/step",
                                     "rewritten/forward", "rewritten/step"}  # fmt: skip


def test_nothing_to_rewrite_is_said_so():
    inputs = keras.Input((None, 4))
    model = keras.Model(inputs, keras.layers.LSTM(3, recurrent_dropout=0.1)(inputs))
    assert rewrite.rewrite(model) == (None, [])


@pytest.mark.parametrize("name", examples.EXAMPLES)
def test_every_example_loads_and_its_audit_is_the_traced_graphs(name, tmp_path):
    model, info = load.load_model_file(examples.example_path(name, tmp_path))
    result = audit.audit(model, SIZES)
    assert info.name == model.name and result.recurrent
    assert verify.verify(model, result).agrees
