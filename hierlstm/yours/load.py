"""A user's model file, opened safely: its archive is read first, within a budget checked before
any member is read (`hierlstm.yours.archive`: the config as JSON, the weights' shapes from their
HDF5 headers, nothing allocated), refused in one sentence when it holds a Lambda, an unregistered
custom layer, no model, a cut-off file, a member over the budget or weights over the memory
budget; then Keras loads it with `safe_mode=True` and `compile=False`, so nothing in the file is
executed."""

from __future__ import annotations

import dataclasses
import hashlib
import zipfile
from pathlib import Path

import numpy as np

from hierlstm.yours import archive as budgets
from hierlstm.yours.archive import ModelFileError

ZIP_MAGIC = b"PK\x03\x04"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_MB = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class ModelFile:
    """What the archive says before anything is built: the model's name, its class, the bytes of
    its weights (from their shapes), the file's SHA-256 (first 16 hex digits)."""

    path: str
    name: str
    class_name: str
    weight_bytes: int
    sha256: str


def file_hash(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _layer_configs(config):
    """Every layer's config dict in a Keras model config, at any depth (wrappers, nested models,
    cells)."""
    if isinstance(config, dict):
        if "class_name" in config and isinstance(config.get("config"), dict):
            yield config
        for value in config.values():
            yield from _layer_configs(value)
    elif isinstance(config, list):
        for value in config:
            yield from _layer_configs(value)


def _refuse_layers(config: dict) -> None:
    """A Lambda (its code would run) or a custom class Keras cannot find, refused by name."""
    import keras

    import hierlstm.yours.folded  # noqa: F401 (registers the rewrite's layer)

    for layer in _layer_configs(config):
        name = layer.get("config", {}).get("name", layer["class_name"])
        if layer["class_name"] == "Lambda":
            raise ModelFileError("yours.bad.lambda", layer=name)
        module = layer.get("module") or ""
        if module.startswith("keras") or layer["class_name"].startswith("__"):  # a tensor, a tuple
            continue
        if not module and _keras_class(layer["class_name"]):  # a legacy .h5 names no module
            continue
        registered = layer.get("registered_name") or layer["class_name"]
        if keras.saving.get_registered_object(registered) is None:
            raise ModelFileError("yours.bad.custom", layer=name, cls=registered)


def _keras_class(name: str) -> bool:
    import keras

    return name in ("Functional", "Sequential", "Model") or any(
        hasattr(namespace, name)
        for namespace in (keras.layers, keras.initializers, keras.regularizers, keras.constraints)
    )


def _weights_bytes(weights_file) -> int:
    """Bytes of every dataset in an HDF5 weights file, from its shapes and dtypes (read from the
    headers: no dataset is read)."""
    import h5py

    total = 0

    def add(_name, item):
        nonlocal total
        if isinstance(item, h5py.Dataset):
            total += int(np.prod(item.shape, dtype=np.int64)) * item.dtype.itemsize

    with h5py.File(weights_file, "r") as weights:
        weights.visititems(add)
    return total


def _read_keras(path: Path, budget: budgets.Budget) -> tuple[dict, int]:
    members = budgets.declared_members(path)
    if members > len(budgets.MEMBERS):
        raise ModelFileError(
            "yours.bad.members", file=path.name, count=members, limit=len(budgets.MEMBERS)
        )
    with zipfile.ZipFile(path) as archive:
        budgets.check_members(archive, path.name, budget)
        if "config.json" not in archive.namelist():
            raise ModelFileError("yours.bad.not_a_model", file=path.name)
        config = budgets.read_json_member(archive, "config.json", path.name, budget)
        weight_bytes = 0
        if "model.weights.h5" in archive.namelist():
            with archive.open("model.weights.h5") as weights:  # seekable: h5py reads headers
                weight_bytes = _weights_bytes(weights)
    return config, weight_bytes


def _read_h5(path: Path, budget: budgets.Budget) -> tuple[dict, int]:
    import h5py

    with h5py.File(path, "r") as file:
        text = file.attrs.get("model_config")
        if text is None:
            raise ModelFileError("yours.bad.not_a_model", file=path.name)
        if len(text) > budget.json_bytes:
            raise budget.refuse(path.name, "model_config", len(text), budget.json_bytes)
        config = budgets.parse_json(text, "model_config", path.name)
        weight_bytes = _weights_bytes(path) if "model_weights" in file else 0
    return config, weight_bytes


def inspect_file(path: str | Path, budget_bytes: int | None = None) -> ModelFile:
    """The archive read without building anything; ModelFileError when it is refused. Its members
    are held to the upload cap's budget (`hierlstm.yours.archive`); the weights' budget defaults
    to the server's memory budget (`hierlstm.admission.current_limits`)."""
    path = Path(path)
    budget = budgets.Budget(budgets.upload_cap_mb())
    with open(path, "rb") as file:
        head = file.read(8)
    try:
        if head.startswith(ZIP_MAGIC):
            config, weight_bytes = _read_keras(path, budget)
        elif head == HDF5_MAGIC:
            config, weight_bytes = _read_h5(path, budget)
        else:
            raise ModelFileError("yours.bad.not_a_model", file=path.name)
    except (zipfile.BadZipFile, OSError, EOFError) as error:  # a cut-off archive or HDF5 file
        raise ModelFileError("yours.bad.truncated", file=path.name) from error
    if not isinstance(config, dict) or config.get("class_name") not in ("Functional", "Sequential"):
        if not (isinstance(config, dict) and config.get("registered_name")):
            raise ModelFileError("yours.bad.not_a_model", file=path.name)
    _refuse_layers(config)
    if budget_bytes is None:
        from hierlstm.admission import current_limits

        budget_bytes = current_limits().memory_budget_bytes
    if weight_bytes > budget.total_bytes:  # compressed inside the HDF5 file: a bomb
        raise budget.refuse(path.name, "model.weights.h5", weight_bytes, budget.total_bytes)
    if weight_bytes > budget_bytes:
        raise ModelFileError(
            "yours.bad.budget", mb=round(weight_bytes / _MB, 1), budget=round(budget_bytes / _MB)
        )
    name = config.get("config", {}).get("name", path.stem)
    return ModelFile(str(path), name, config["class_name"], weight_bytes, file_hash(path))


def load_model_file(path: str | Path, budget_bytes: int | None = None):
    """(the Keras model, its `ModelFile`): inspected first, then loaded with `safe_mode=True`
    and `compile=False`; ModelFileError for every refusal, Keras's own included."""
    import keras

    info = inspect_file(path, budget_bytes)
    try:
        model = keras.saving.load_model(path, compile=False, safe_mode=True)
    except (TypeError, ValueError) as error:  # Keras's words for a class it cannot rebuild
        raise ModelFileError(
            "yours.bad.keras", file=Path(path).name, error=_first_line(error)
        ) from error
    except (OSError, EOFError, zipfile.BadZipFile) as error:
        raise ModelFileError("yours.bad.truncated", file=Path(path).name) from error
    if not isinstance(model, keras.Model):
        raise ModelFileError("yours.bad.not_a_model", file=Path(path).name)
    return model, info


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
