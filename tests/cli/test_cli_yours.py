"""`python -m hierlstm audit` on a model written by hand and saved here, as a new user would: the
trace, every recurrent layer's kernel and reason per backend, verified on the traced graph, the
rewrite saved and timed; a bad file is one `error:` line and exit 2."""

import json

import keras
import pytest
from factories import run_cli as run

from hierlstm import backends
from hierlstm.backends.exported import runtimes_missing
from hierlstm.registry import RUNTIMES
from hierlstm.results.store import ResultStore
from hierlstm.yours import load
from hierlstm.yours.load import file_hash


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    """Sentences of words: an Embedding, a summary of each 3-word chunk by RNN(LSTMCell) under
    TimeDistributed, a GRU with reset_after=False."""
    words = keras.Input((None, 3), dtype="int32", name="words")  # (B, T, 3)
    x = keras.layers.Embedding(50, 8, name="embedding")(words)  # (B, T, 3, 8)
    chunk = keras.layers.RNN(keras.layers.LSTMCell(6), name="chunk")
    x = keras.layers.TimeDistributed(chunk, name="chunks")(x)  # (B, T, 6)
    x = keras.layers.GRU(5, reset_after=False, name="sentence")(x)  # (B, 5)
    path = tmp_path_factory.mktemp("mine") / "sentences.keras"
    keras.Model(words, keras.layers.Dense(2, name="head")(x), name="sentences").save(path)
    return path


def test_the_audit_as_json(capsys, model_file):
    status, out, _ = run(capsys, "yours", model_file, "--size batch=3 --size time=4 --json")
    assert status == 0
    document = json.loads(out)
    audit = document["audit"]
    assert audit["input_shapes"] == [[3, 4, 3]]
    steps = {step["path"]: step for step in audit["steps"]}
    assert steps["chunks/chunk"]["concrete_shape"] == [3, 6] and steps["chunks/chunk"]["calls"] == 4
    kernels = {row["path"]: row["kernels"] for row in audit["recurrent"]}
    assert kernels["chunks/chunk"]["tensorflow"]["reason"] == "kernel.why.cell"
    assert kernels["sentence"]["jax"]["reason"] == "kernel.why.reset_after"
    # every condition, not only the first, each with its fix
    every = kernels["sentence"]["jax"]["reasons"]
    assert [entry["reason"] for entry in every] == ["kernel.why.reset_after", "kernel.why.gru_jax"]
    assert all(entry["fix"].startswith("sentence: ") for entry in every)
    assert document["verified"]["agrees"] is True
    assert [s["key"] for s in audit["suggestions"]] == ["yours.suggest.reset_after"]
    assert document["file"]["name"] == "sentences"


def test_the_rewrite_is_saved_checked_and_timed(capsys, model_file, tmp_path):
    out_path, db = tmp_path / "rewritten.keras", tmp_path / "results.sqlite3"
    argv = ("--size time=2 --backend tensorflow --bench --repeats 1 --rewrite", out_path)
    status, out, _ = run(capsys, "yours", model_file, *argv, "--db", db)
    assert status == 0
    (stored,) = ResultStore(db).audits().to_dict(orient="records")  # the run, by name and hash
    assert (stored["model_name"], stored["file_sha256"]) == ("sentences", file_hash(model_file))
    assert "chunks: TimeDistributed(RNN(LSTMCell)) -> FoldedTimeDistributed(LSTM)" in out
    assert "outputs and gradients match" in out and "step:" in out and "forward:" in out
    assert "jax" not in out  # only the backend asked for
    # exported and timed on each runtime beside TensorFlow, the fused LSTMs named by layer; or,
    # without the runtimes' extra, one line saying how to install it, the rest of --bench kept
    if (reason := runtimes_missing()) is not None:
        assert f"not run on the runtimes: {reason}" in out
    else:
        assert "exported to ONNX (tf2onnx): fused recurrent ops: chunks (2 LSTM)" in out
        for name in RUNTIMES:
            assert f"forward {name}: " in out or backends.missing(name) in out
    model, _ = load.load_model_file(out_path)
    status, out, _ = run(capsys, "yours", out_path, "--size time=4 --json")
    kernels = {row["path"]: row["kernels"] for row in json.loads(out)["audit"]["recurrent"]}
    assert kernels["chunks/chunk"]["tensorflow"]["kernel"] == "cudnn"


def test_a_layer_the_converter_rejects_is_one_error_line(capsys, tmp_path):
    pytest.importorskip("tf2onnx")
    tokens = keras.Input((None,), dtype="int64", name="tokens")  # (B, T)
    x = keras.layers.Hashing(10, name="hash")(tokens)  # tf2onnx has no ONNX form for its op
    x = keras.layers.LSTM(2, name="rnn")(keras.layers.Embedding(10, 3, name="embed")(x))
    path = tmp_path / "hashed.keras"
    keras.Model(tokens, x, name="hashed").save(path)
    status, out, err = run(capsys, "yours", path, "--size time=3 --bench --repeats 1")
    assert (status, out) == (2, "")
    assert err == (
        "error: tf2onnx could not convert layer hash of hashed: its op StringToHashBucketFast "
        "has no ONNX form, so no runtime can load the file.\n"
    )


def test_a_bad_file_is_one_error_line(capsys, tmp_path):
    cut = tmp_path / "cut.keras"
    cut.write_bytes(b"PK\x03\x04" + b"\0" * 40)
    status, out, err = run(capsys, "yours", cut)
    assert (status, out) == (2, "")
    assert (
        err == "error: cut.keras is cut off or damaged: its archive cannot be read to the end "
        "(save or upload it again)\n"
    )
