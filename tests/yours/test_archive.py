"""A hostile model file, refused before any member is read and in one line per language: a
member that expands past the upload cap's budget, more members than a model file has, a member
that is not a model's, a JSON config nested too deep (both the parser's stack and the counted
depth), weights whose HDF5 datasets expand past the budget, a member that yields more than it
declared. A real model file passes, and the command line says each refusal in one `error:` line
with exit 2."""

import io
import json
import zipfile

import h5py
import keras
import numpy as np
import pytest
from factories import run_cli

from hierlstm.i18n import LANGUAGES
from hierlstm.yours import archive, load

MB = 1024 * 1024


@pytest.fixture(autouse=True)
def one_mib_cap(monkeypatch):
    """A 1 MiB upload cap: the archive may expand to 2 MiB, a config to 1 MiB."""
    monkeypatch.setenv(archive.UPLOAD_ENV, "1")


@pytest.fixture
def opened_members(monkeypatch):
    """The names of the members opened for reading, by anything."""
    opened = []
    original = zipfile.ZipFile.open

    def recording(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", recording)
    return opened


def real_model_members(tmp_path) -> dict[str, bytes]:
    inputs = keras.Input((None, 4), name="features")
    path = tmp_path / "real.keras"
    keras.Model(inputs, keras.layers.LSTM(3, name="rnn")(inputs), name="real").save(path)
    with zipfile.ZipFile(path) as model_file:
        return {name: model_file.read(name) for name in model_file.namelist()}


def zipped(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as written:
        for name, data in members.items():
            written.writestr(name, data)
    return path


def bomb_config(tmp_path):
    """config.json that expands to 8 MiB (of spaces, after a real config) from about 8 KiB."""
    members = real_model_members(tmp_path)
    members["config.json"] = members["config.json"] + b" " * (8 * MB)
    return zipped(tmp_path / "bomb.keras", members)


def many_members(tmp_path):
    members = {f"filler/{index}.txt": b"" for index in range(2000)}
    return zipped(tmp_path / "crowd.keras", {**real_model_members(tmp_path), **members})


def stranger_member(tmp_path):
    members = real_model_members(tmp_path)
    del members["metadata.json"]
    return zipped(tmp_path / "assets.keras", {**members, "../escape.sh": b"rm -rf /"})


def deep_for_the_parser(tmp_path):
    text = b"[" * 200_000 + b"]" * 200_000  # past any stack: json.loads gives up
    return zipped(tmp_path / "deep.keras", {"config.json": text})


def deep_by_count(tmp_path):
    config = {"class_name": "Functional", "config": {"name": "deep", "layers": []}}
    nested = config["config"]
    for _ in range(archive.MAX_DEPTH):
        nested["inner"] = {}
        nested = nested["inner"]
    return zipped(tmp_path / "nested.keras", {"config.json": json.dumps(config).encode()})


def weights_bomb(tmp_path):
    """A real config with an HDF5 weights file whose one gzip dataset declares 4 MiB of zeros."""
    members = real_model_members(tmp_path)
    weights = io.BytesIO()
    with h5py.File(weights, "w") as file:
        file.create_dataset("zeros", data=np.zeros(MB, np.float32), compression="gzip")
    members["model.weights.h5"] = weights.getvalue()
    assert len(members["model.weights.h5"]) < MB // 8
    return zipped(tmp_path / "weights.keras", members, zipfile.ZIP_STORED)


HOSTILE = {
    "bomb_config": (bomb_config, "yours.bad.expands", "config.json"),
    "many_members": (many_members, "yours.bad.members", "2003"),
    "stranger_member": (stranger_member, "yours.bad.member", "../escape.sh"),
    "deep_for_the_parser": (deep_for_the_parser, "yours.bad.deep", "config.json"),
    "deep_by_count": (deep_by_count, "yours.bad.deep", "config.json"),
    "weights_bomb": (weights_bomb, "yours.bad.expands", "model.weights.h5"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_archive_is_one_line_naming_what_was_too_big(case, tmp_path, opened_members):
    make, key, named = HOSTILE[case]
    path = make(tmp_path)
    opened_members.clear()  # making the file read a real one
    with pytest.raises(load.ModelFileError) as raised:
        load.load_model_file(path)
    assert raised.value.key == key
    for lang in LANGUAGES:
        sentence = raised.value.sentence(lang)
        assert named in sentence and path.name in sentence and "\n" not in sentence, sentence
    if key in ("yours.bad.expands", "yours.bad.members", "yours.bad.member"):
        if case != "weights_bomb":  # its datasets' shapes are read from the HDF5 headers
            assert opened_members == []


def test_the_member_count_is_read_before_the_directory_is_parsed(tmp_path, monkeypatch):
    path = many_members(tmp_path)
    monkeypatch.setattr(zipfile, "ZipFile", None)  # any use of it would raise a TypeError
    assert archive.declared_members(path) == 2003
    with pytest.raises(load.ModelFileError, match="declares 2003 members"):
        load.inspect_file(path)


def test_a_member_that_yields_more_than_it_declared_is_refused(tmp_path):
    """The central directory says config.json is 10 bytes; what follows is the real config. The
    read stops at the declared size, and the CRC says the archive is damaged."""
    members = real_model_members(tmp_path)
    path = zipped(tmp_path / "liar.keras", members, zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as model_file:
        local = model_file.getinfo("config.json").header_offset  # its local header
    entry = data.index(b"PK\x01\x02")  # the directory's first entry
    while data[entry + 46 : entry + 57] != b"config.json":
        entry = data.index(b"PK\x01\x02", entry + 4)
    ten = (10).to_bytes(4, "little")
    data[entry + 20 : entry + 28] = ten + ten  # the directory's compressed and file sizes
    data[local + 18 : local + 26] = ten + ten  # the local header's
    path.write_bytes(bytes(data))
    with pytest.raises(load.ModelFileError) as raised:
        load.load_model_file(path)
    assert raised.value.key == "yours.bad.truncated", raised.value


def test_a_legacy_h5_config_nested_too_deep_is_refused(tmp_path):
    path = tmp_path / "deep.h5"
    with h5py.File(path, "w") as file:
        file.attrs["model_config"] = "[" * 5000 + "]" * 5000
    with pytest.raises(load.ModelFileError) as raised:
        load.inspect_file(path)
    assert raised.value.key == "yours.bad.deep" and "model_config" in str(raised.value)


def test_a_real_model_file_is_within_its_budget(tmp_path):
    path = zipped(tmp_path / "real.keras", real_model_members(tmp_path), zipfile.ZIP_STORED)
    model, info = load.load_model_file(path)
    assert info.name == "real" and [layer.name for layer in model.layers] == ["features", "rnn"]


def test_the_depth_is_counted_without_recursion():
    assert archive.depth(1) == 0 and archive.depth([]) == 1 and archive.depth({"a": [[2]]}) == 3
    nested = []
    for _ in range(10 * archive.MAX_DEPTH):
        nested = [nested]
    assert archive.depth(nested) == archive.MAX_DEPTH + 1  # counted no further than refused


def test_the_command_line_refuses_a_bomb_in_one_error_line(capsys, tmp_path):
    status, out, err = run_cli(capsys, "yours", bomb_config(tmp_path))
    assert (status, out) == (2, "")
    assert err.startswith("error: config.json in bomb.keras expands to 8.0 MiB, over the 1.0 MiB")
    assert err.count("\n") == 1 and "HIERLSTM_UPLOAD_MB" in err
