"""A user's file, refused in one sentence per language before anything from it is built: a Lambda,
an unregistered custom layer, not a model, a truncated archive, weights over the memory budget
(read from the archive's weight shapes). A good .keras and a Keras .h5 load."""

import zipfile

import keras
import pytest

from hierlstm.i18n import LANGUAGES
from hierlstm.yours import load


def small_model(*layers) -> keras.Model:
    inputs = keras.Input((None, 4), name="features")
    x = inputs
    for layer in layers or (keras.layers.LSTM(3, name="rnn"),):
        x = layer(x)
    return keras.Model(inputs, x, name="small")


class Unregistered(keras.layers.Layer):  # saved by its class name, never registered
    def call(self, inputs):
        return inputs


def lambda_file(folder):
    path = folder / "lambda.keras"
    small_model(keras.layers.Lambda(lambda x: x * 2, name="doubling")).save(path)
    return path


def custom_file(folder):
    path = folder / "custom.keras"
    small_model(Unregistered(name="mine"), keras.layers.LSTM(3)).save(path)
    return path


def text_file(folder):
    path = folder / "notes.keras"
    path.write_text("not a model\n")
    return path


def zip_without_config(folder):
    path = folder / "archive.keras"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("metadata.json", "{}")
    return path


def truncated_file(folder):
    whole = folder / "whole.keras"
    small_model().save(whole)
    path = folder / "cut.keras"
    path.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    return path


BAD = {
    "lambda": (lambda_file, "yours.bad.lambda", "doubling"),
    "custom": (custom_file, "yours.bad.custom", "mine"),
    "not_a_model": (text_file, "yours.bad.not_a_model", "notes.keras"),
    "zip_without_config": (zip_without_config, "yours.bad.not_a_model", "archive.keras"),
    "truncated": (truncated_file, "yours.bad.truncated", "cut.keras"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_bad_file_is_one_line_in_both_languages(case, tmp_path):
    make, key, named = BAD[case]
    with pytest.raises(load.ModelFileError) as raised:
        load.load_model_file(make(tmp_path))
    assert raised.value.key == key
    for lang in LANGUAGES:
        sentence = raised.value.sentence(lang)
        assert named in sentence and "\n" not in sentence, (lang, sentence)


def test_weights_over_the_budget_are_refused_from_their_shapes(tmp_path, monkeypatch):
    path = tmp_path / "big.keras"
    small_model(keras.layers.Dense(256, name="wide")).save(path)  # 4*256 + 256 float32
    info = load.inspect_file(path, budget_bytes=10**9)
    assert info.weight_bytes == 4 * (4 * 256 + 256)
    with pytest.raises(load.ModelFileError) as raised:
        load.inspect_file(path, budget_bytes=4 * 1024)
    assert raised.value.key == "yours.bad.budget" and "\n" not in str(raised.value)
    # The server's budget is the default: HIERLSTM_MEMORY_BUDGET_MB, here below the weights.
    monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "1")
    wide = tmp_path / "wide.keras"
    small_model(keras.layers.Dense(70_000, name="wider")).save(wide)  # 1.3 MiB
    with pytest.raises(load.ModelFileError, match="over this server's memory budget of 1 MiB"):
        load.load_model_file(wide)


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_a_good_file_loads_with_its_name_and_hash(tmp_path, suffix):
    path = tmp_path / f"mine{suffix}"
    original = small_model()
    original.save(path)
    model, info = load.load_model_file(path)
    assert (info.name, info.class_name, len(info.sha256)) == ("small", "Functional", 16)
    assert info.weight_bytes == 4 * original.count_params()
    assert [layer.name for layer in model.layers] == ["features", "rnn"]
