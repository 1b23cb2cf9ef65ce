"""The audit of a user's model, each reason on a small model built here: the kernel and first reason
per backend, and on TensorFlow the same answer read from the graph traced as a GPU traces it
(Keras's `_is_gpu_available` answers yes; graphs holding CudnnRNNV3 are traced, never run)."""

import dataclasses

import keras
import pytest
from factories import html_tables

from hierlstm import audit as public_audit
from hierlstm.i18n import LANGUAGES, t
from hierlstm.model import cudnn
from hierlstm.yours import audit, verify, walk

KERAS = audit.KERAS_BACKENDS  # one cuDNN rule each

SIZES = {"batch": 2, "time": 3}
CUDNN = ("cudnn", "")


def sequence_model(layer, features=4, time=None) -> keras.Model:
    inputs = keras.Input((time, features), name="features")  # (B, T, 4)
    return keras.Model(inputs, layer(inputs), name="small")


def masked_model() -> keras.Model:
    tokens = keras.Input((None,), dtype="int32", name="tokens")  # (B, T), 0 = padding
    x = keras.layers.Embedding(10, 4, mask_zero=True, name="embedding")(tokens)
    return keras.Model(tokens, keras.layers.LSTM(3, name="rnn")(x), name="masked")


def nested_model() -> keras.Model:
    inner = keras.Sequential(
        [keras.Input((None, 4)), keras.layers.GRU(3, name="inner_gru")], name="inner"
    )
    inputs = keras.Input((None, 4), name="features")
    return keras.Model(inputs, inner(inputs), name="outer")


def td_model(inner) -> keras.Model:
    inputs = keras.Input((None, 5, 4), name="frames")  # (B, T, 5, 4)
    return keras.Model(inputs, keras.layers.TimeDistributed(inner, name="td")(inputs))


# name: (model factory, audit options, path, {backend: (kernel, reason key)}), TensorFlow's always
# given: it is the one checked on the traced graph.
CASES = {
    "lstm": (lambda: sequence_model(keras.layers.LSTM(3, name="rnn")), {}, "rnn",
             {"tensorflow": CUDNN, "jax": CUDNN, "torch": CUDNN}),
    "gru": (lambda: sequence_model(keras.layers.GRU(3, name="rnn")), {}, "rnn",
            {"tensorflow": CUDNN, "jax": ("generic", "kernel.why.gru_jax"), "torch": CUDNN}),
    "activation": (lambda: sequence_model(keras.layers.LSTM(3, activation="relu", name="rnn")),
                   {}, "rnn", {"tensorflow": ("generic", "kernel.why.activation")}),
    "recurrent_activation": (
        lambda: sequence_model(keras.layers.GRU(3, recurrent_activation="hard_sigmoid",
                                                name="rnn")),
        {}, "rnn", {"tensorflow": ("generic", "kernel.why.recurrent_activation")}),
    "recurrent_dropout": (
        lambda: sequence_model(keras.layers.LSTM(3, recurrent_dropout=0.2, name="rnn")),
        {}, "rnn", {b: ("generic", "kernel.why.recurrent_dropout") for b in KERAS}),
    "unroll": (lambda: sequence_model(keras.layers.LSTM(3, unroll=True, name="rnn"), time=3),
               {}, "rnn", {"tensorflow": ("generic", "kernel.why.unroll")}),
    "use_bias": (lambda: sequence_model(keras.layers.GRU(3, use_bias=False, name="rnn")),
                 {}, "rnn", {b: ("generic", "kernel.why.use_bias") for b in KERAS}),
    "reset_after": (lambda: sequence_model(keras.layers.GRU(3, reset_after=False, name="rnn")),
                    {}, "rnn", {"tensorflow": ("generic", "kernel.why.reset_after")}),
    "cell": (lambda: sequence_model(keras.layers.RNN(keras.layers.LSTMCell(3), name="rnn")),
             {}, "rnn", {b: ("generic", "kernel.why.cell") for b in KERAS}),
    "use_cudnn": (lambda: sequence_model(keras.layers.LSTM(3, use_cudnn=False, name="rnn")),
                  {}, "rnn", {b: ("generic", "kernel.why.requested") for b in KERAS}),
    "simple_rnn": (lambda: sequence_model(keras.layers.SimpleRNN(3, name="rnn")), {}, "rnn",
                   {"tensorflow": ("generic", "kernel.why.simple_rnn")}),
    "jit_compile": (lambda: sequence_model(keras.layers.LSTM(3, name="rnn")),
                    {"jit_compile": True}, "rnn",
                    {"tensorflow": ("fails", "kernel.why.xla"), "jax": CUDNN}),
    "jit_compile_generic": (
        lambda: sequence_model(keras.layers.LSTM(3, use_cudnn=False, name="rnn")),
        {"jit_compile": True}, "rnn", {"tensorflow": ("generic", "kernel.why.requested")}),
    "mask": (masked_model, {}, "rnn",
             {"tensorflow": CUDNN, "jax": ("generic", "kernel.why.masked"),
              "torch": ("generic", "kernel.why.masked")}),
    "torch_compile": (lambda: sequence_model(keras.layers.LSTM(3, name="rnn")),
                      {"torch_compile": True}, "rnn",
                      {"tensorflow": CUDNN, "torch": ("generic", "kernel.why.compiling")}),
    "bidirectional_forward": (
        lambda: sequence_model(keras.layers.Bidirectional(keras.layers.GRU(3, name="g"),
                                                          name="bi")),
        {}, "bi/forward_g", {"tensorflow": CUDNN}),
    "bidirectional_backward": (
        lambda: sequence_model(keras.layers.Bidirectional(
            keras.layers.LSTM(3, activation="relu", name="l"), name="bi")),
        {}, "bi/backward_l", {"tensorflow": ("generic", "kernel.why.activation")}),
    "time_distributed": (lambda: td_model(keras.layers.LSTM(3, name="inner")), {}, "td/inner",
                         {"tensorflow": CUDNN}),
    "time_distributed_cell": (
        lambda: td_model(keras.layers.RNN(keras.layers.GRUCell(3), name="inner")), {},
        "td/inner", {"tensorflow": ("generic", "kernel.why.cell")}),
    "nested_model": (nested_model, {}, "inner/inner_gru", {"tensorflow": CUDNN}),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_each_reason_is_the_audits_and_the_traced_graphs(case):
    factory, options, path, expected = CASES[case]
    model = factory()
    names = {dimension.name for dimension in walk.free_dimensions(model)}
    result = audit.audit(model, {k: v for k, v in SIZES.items() if k in names}, **options)
    rows = {row.path: row for row in result.recurrent}
    for backend, (kernel, reason) in expected.items():
        assert (rows[path].kernels[backend].kernel, rows[path].kernels[backend].reason) == (
            kernel,
            reason,
        ), backend
    checked = verify.verify(model, result)
    assert checked.agrees, checked.to_dict()
    assert {c.path: c.found for c in checked.layers}[path] == expected["tensorflow"][0]


def test_the_verification_can_disagree():
    """An audit that claimed the generic loop for a layer whose graph holds cuDNN's op, or cuDNN
    for one whose graph does not, is caught."""
    model = sequence_model(keras.layers.LSTM(3, name="rnn"))
    result = audit.audit(model, SIZES)
    row = result.recurrent[0]
    generic = {**row.kernels, "tensorflow": audit.Kernel("generic", "kernel.why.other")}
    wrong = dataclasses.replace(result, recurrent=[dataclasses.replace(row, kernels=generic)])
    assert not verify.verify(model, wrong).agrees
    dropout = sequence_model(keras.layers.LSTM(3, recurrent_dropout=0.1, name="rnn"))
    claimed = dataclasses.replace(
        audit.audit(dropout, SIZES),
        recurrent=[dataclasses.replace(row, kernels={"tensorflow": audit.Kernel("cudnn", "")})],
    )
    assert not verify.verify(dropout, claimed).agrees


def test_every_reason_reads_one_line_in_both_languages():
    keys = {key for key, _ in cudnn._ARGUMENT_REASONS} | {"kernel.why.gru_jax", "yours.why.cudnn"}
    keys |= set(audit.FIXES.values())
    for key in keys:
        for lang in LANGUAGES:
            text = t(key, lang, layer="rnn")
            assert text != key and "\n" not in text, (key, lang)


def test_a_layer_that_fails_several_conditions_lists_every_one_per_backend_with_its_fix():
    """keras#19647 asked for every reason; the audit names each condition the layer fails, in
    the order Keras meets them, per backend, the first still the table's reason."""
    tokens = keras.Input((None,), dtype="int32", name="tokens")  # (B, T), 0 = padding
    x = keras.layers.Embedding(10, 4, mask_zero=True, name="embedding")(tokens)
    layer = keras.layers.LSTM(3, activation="relu", recurrent_dropout=0.1, name="rnn")
    model = keras.Model(tokens, layer(x), name="several")
    found = audit.audit(model, SIZES, jit_compile=True, torch_compile=True)
    (row,) = found.recurrent
    arguments = ("kernel.why.activation", "kernel.why.recurrent_dropout")
    assert {backend: kernel.reasons for backend, kernel in row.kernels.items()} == {
        "tensorflow": (*arguments, "kernel.why.xla"),  # TensorFlow's cuDNN takes the mask
        "jax": (*arguments, "kernel.why.masked"),  # cuDNN is a custom call inside XLA there
        "torch": (*arguments, "kernel.why.masked", "kernel.why.compiling"),
    }
    assert all(k.reason == k.reasons[0] and k.kernel == "generic" for k in row.kernels.values())
    for lang in LANGUAGES:
        torch = row.to_dict(lang)["kernels"]["torch"]["reasons"]
        assert [entry["reason"] for entry in torch] == list(row.kernels["torch"].reasons)
        for entry in torch:
            assert entry["why"] == t(entry["reason"], lang)
            assert entry["fix"] == t(audit.FIXES[entry["reason"]], lang, layer="rnn")


def test_the_variants_rule_is_the_layers_rule():
    """The variants' reasons come from the same per-layer rule: an RNN(LSTMCell) variant and a
    generic-kernel config read as their layer facts."""
    from hierlstm.config import RunConfig

    config = RunConfig(variant="shared_cell")
    facts = {"cuda_build": True, "gpu_visible": True}
    assert cudnn.refusal(config, **facts, cell=True) == cudnn.layer_refusal(
        "tensorflow", cudnn.RecurrentFacts(kind="cell"), **facts
    )
    generic = config.replace(lstm_kernel="generic")
    assert cudnn.refusal_torch(generic, **facts) == "kernel.why.requested"
    assert cudnn.refusal_jax(config, **facts, masked=True) == "kernel.why.masked"


def test_pitfalls_beside_the_reasons():
    stateful = keras.Sequential(
        [keras.Input((3, 4), batch_size=2), keras.layers.LSTM(3, stateful=True, name="rnn")]
    )
    keys = [m.key for m in audit.audit(stateful, {}).pitfalls]
    assert keys == ["yours.pitfall.jit_auto", "yours.pitfall.stateful"]
    masked = [m.key for m in audit.audit(masked_model(), SIZES).pitfalls]
    assert masked == ["yours.pitfall.jit_auto", "yours.pitfall.mask_tf"]
    unknown = [m.key for m in audit.audit(td_model(keras.layers.LSTM(3)), SIZES).pitfalls]
    assert unknown[0] == "yours.pitfall.td_unknown"
    jit = audit.audit(sequence_model(keras.layers.LSTM(3, name="rnn")), SIZES, jit_compile=True)
    assert [m.key for m in jit.pitfalls] == ["yours.pitfall.xla_fails"]


def test_a_model_without_recurrent_layers_is_a_note_and_still_traced():
    inputs = keras.Input((5,), name="features")
    model = keras.Model(inputs, keras.layers.Dense(3, name="head")(inputs))
    result = public_audit(model, {"batch": 4})
    assert [m.key for m in result.notes] == ["yours.note.no_recurrent"]
    assert [(s.path, s.concrete_shape, s.flops) for s in result.steps] == [
        ("features", (4, 5), 0),  # the input, as the Shape trace lists it
        ("head", (4, 3), 2 * 5 * 3 * 4),
    ]
    assert result.to_dict()["notes"][0]["text"] == t("yours.note.no_recurrent")


def test_suggestions_name_the_argument_and_what_it_changes():
    model = sequence_model(keras.layers.LSTM(3, recurrent_dropout=0.2, name="rnn"))
    (suggestion,) = audit.audit(model, SIZES).suggestions
    assert suggestion.key == "yours.suggest.recurrent_dropout"
    assert "recurrent_dropout=0" in suggestion.text() and "rnn" in suggestion.text()
    cell = sequence_model(keras.layers.RNN(keras.layers.LSTMCell(3), name="rnn"))
    assert audit.audit(cell, SIZES).suggestions == []  # rewritten instead


def test_the_trace_gives_shapes_params_and_flops_inside_wrappers():
    inputs = keras.Input((6, None, 1), name="image")  # (B, 6, T, 1)
    x = keras.layers.Conv2D(2, 3, padding="same", name="conv")(inputs)  # (B, 6, T, 2)
    x = keras.layers.MaxPooling2D((3, 1), name="pool")(x)  # (B, 2, T, 2)
    x = keras.layers.Permute((2, 1, 3), name="permute")(x)  # (B, T, 2, 2)
    x = keras.layers.TimeDistributed(keras.layers.LSTM(4, name="inner"), name="td")(x)
    x = keras.layers.Bidirectional(keras.layers.GRU(3, return_sequences=True), name="bi")(x)
    x = keras.layers.Attention(name="attention")([x, x])
    model = keras.Model(inputs, x, name="image_model")
    assert [d.name for d in walk.free_dimensions(model)] == ["batch", "time"]
    steps = {s.path: s for s in walk.trace_layers(model, {"batch": 2, "time": 5})}
    assert steps["td"].symbolic_shape == (None, None, 4)
    assert steps["td"].concrete_shape == (2, 5, 4)
    assert (steps["td/inner"].concrete_shape, steps["td/inner"].calls) == ((2, 4), 5)
    assert steps["conv"].flops == 2 * 9 * 1 * (2 * 6 * 5 * 2)
    assert steps["pool"].flops == 2 * (2 * 2 * 5 * 2)
    assert steps["td/inner"].flops == 2 * 4 * 4 * (2 + 4) * 2 * 2 * 5  # per call x 5 calls
    gru = 2 * 3 * 3 * (4 + 3) * 5 * 2
    assert steps["bi/forward_gru"].flops == steps["bi/backward_gru"].flops == gru
    assert steps["bi"].flops == 2 * gru
    assert steps["bi"].params == model.get_layer("bi").count_params()
    result = audit.audit(model, {"batch": 2, "time": 5})
    assert result.uncounted == ["attention"]


def test_a_notebook_shows_the_audit_as_the_your_model_page_s_tables():
    cell = keras.layers.RNN(
        keras.layers.LSTMCell(3, name="cell"), return_sequences=True, name="rnn"
    )
    inputs = keras.Input((None, 4), name="features")  # (B, T, 4)
    x = cell(inputs)  # (B, T, 3)
    x = keras.layers.LSTM(3, recurrent_dropout=0.2, name="dropped")(x)  # (B, 3)
    result = audit.audit(keras.Model(inputs, x, name="small"), SIZES)
    html = result._repr_html_()
    layers, kernels = html_tables(html)
    assert layers[0] == ["layer", "class", "symbolic shape", "concrete shape", "params", "FLOPs"]
    assert [row[0] for row in layers[1:]] == [
        "features",
        "rnn",
        "↳ rnn/cell",
        "dropped",
    ]
    assert kernels[0] == ["layer", "class", "backend", "kernel", "why", "every reason, and its fix"]
    backends = list(KERAS)
    assert [row[:3] for row in kernels[1:]] == [
        [path, layer, backend]
        for path, layer in (("rnn", "RNN(LSTMCell)"), ("dropped", "LSTM"))
        for backend in backends
    ]
    dropped = kernels[1 + len(backends)]
    assert dropped[3:5] == ["generic", t("kernel.why.recurrent_dropout")]
    (suggestion,) = result.suggestions  # no layer takes cuDNN: no pitfall of jit_compile="auto"
    assert result.tables()[1].notes == (suggestion.text(),) and "recurrent_dropout=0" in html
    chinese = html_tables(result.show("zh")._repr_html_())
    assert chinese[1][0][4] == t("yours.col.why", "zh") == "原因"
    assert chinese[1][1 + len(backends)][4] == t("kernel.why.recurrent_dropout", "zh")
    assert repr(result).startswith("Every layer of small\n")


def test_the_page_s_kernel_table_adds_whether_the_traced_graph_agrees():
    model = sequence_model(keras.layers.LSTM(3, name="rnn"))
    result = audit.audit(model, SIZES)
    table = result.kernel_table("en", verify.verify(model, result))
    verified = t("yours.col.verified")
    assert list(table[verified]) == ["yes" if backend == "tensorflow" else "" for backend in KERAS]
