"""The frozen, hashable settings of a run: `RunConfig` (what runs) and `Timing` (how it is timed),
validated at construction. An invalid value raises `SettingError` (a ValueError) in one sentence
naming the field, the value and what is allowed; `RunConfig.from_strings` does the same for text. No
TensorFlow or Keras."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from hierlstm.registry import BACKEND_RECORDS, BACKENDS, VARIANTS, conversion_refusal

PRECISIONS = ("float32", "mixed_float16", "mixed_bfloat16")
SWEEP_AXES = ("time_steps", "batch_size")  # the RunConfig sizes a sweep may vary
LSTM_KERNELS = ("auto", "generic")
STRATEGIES = ("none", "mirrored", "multi_worker")  # tf.distribute strategies (timing.distribute)
TASKS = ("inference", "training")  # what is timed: a forward pass, or a training step
OPTIMIZERS = ("sgd", "adam")  # Keras optimizers of a training step (hierlstm.model.training)

# Sanity bounds of every whole-number setting, in one table with one wording (`out_of_bounds`).
# They stop a typo (batch 1e9) long before anything is allocated; the tighter limits that depend
# on the machine (memory, trace time) live in hierlstm.admission.limits.
BOUNDS = {
    "batch_size": (1, 65536),
    "time_steps": (1, 100000),
    "height": (1, 4096),
    "filters": (1, 1024),
    "kernel_size": (1, 15),
    "pool_height": (1, 512),
    "inner_units": (1, 2048),
    "outer_units": (1, 2048),
    "warmup": (0, 1000),
    "repeats": (1, 100000),
    "seed": (0, 2**31 - 1),
    "profile_steps": (1, 100),  # steps under the TensorFlow Profiler (hierlstm.profiling.profiler)
}
SIZE_FIELDS = ("batch_size", "time_steps", "height", "filters", "kernel_size", "pool_height")
SIZE_FIELDS += ("inner_units", "outer_units")


class SettingError(ValueError):
    """A setting refused by a check: a value out of bounds, a device this machine does not have,
    a run over a server limit. One sentence naming the setting, the value and what is allowed.
    It is the run's failure, not a bug: the harness records it as a failed result."""


def out_of_bounds(name: str, value, low: int, high: int, scope: str = "") -> str:
    """The one wording of a number outside its bounds ("" when it is inside). `scope` says
    whose bounds they are when they are not hierlstm's own (" in the app")."""
    if low <= value <= high:
        return ""
    return f"{name} must be between {low} and {high}{scope}; got {value}."


def data_folder(environ: Mapping[str, str] | None = None) -> Path:
    """Where hierlstm keeps its files (the results file, the lock files): $XDG_DATA_HOME/hierlstm,
    XDG_DATA_HOME defaulting to ~/.local/share (and, as the XDG spec asks, a relative value
    being ignored)."""
    environ = os.environ if environ is None else environ
    data_home = environ.get("XDG_DATA_HOME", "").strip()
    if not data_home or not os.path.isabs(data_home):
        data_home = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / "hierlstm"


def named_sizes(config: RunConfig) -> dict[str, int]:
    """The sizes a catalogue text names ({height}, {pooled_height}, {filters}, {inner}, {outer}):
    the config's, so a text follows Advanced geometry."""
    return {
        "height": config.height,
        "filters": config.filters,
        "pooled_height": config.pooled_height,
        "inner": config.inner_units,
        "outer": config.outer_units,
    }


def default_logdir(config: RunConfig, now: datetime | None = None) -> Path:
    """A new folder for one profile capture: <data folder>/profiles/<UTC time>-<variant>-<task>,
    and -<backend> after it for a capture a JAX or torch worker writes. Here, without
    TensorFlow, so the command line's JAX and torch path names its captures as the app does."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S_%fZ")
    backend = "" if BACKEND_RECORDS[config.backend].in_process else f"-{config.backend}"
    return data_folder() / "profiles" / f"{stamp}-{config.variant}-{config.task}{backend}"


def check_whole(name: str, value, low: int, high: int) -> None:
    """SettingError unless `value` is a whole number within [low, high], in the one wording."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SettingError(f"{name} must be a whole number; got {value!r}.")
    if message := out_of_bounds(name, value, low, high):
        raise SettingError(message)


@dataclasses.dataclass(frozen=True)
class Timing:
    """How a run is timed: `warmup` untimed calls after the first call, then `repeats` timed
    samples (in interleaved rounds when several configs are compared); `seed` makes the input
    and the parameters. The defaults are a careful measurement; `QUICK_TIMING` is a first look."""

    warmup: int = 3
    repeats: int = 20
    seed: int = 0

    def __post_init__(self):
        for field in dataclasses.fields(self):
            check_whole(field.name, getattr(self, field.name), *BOUNDS[field.name])

    @property
    def calls(self) -> int:
        """Calls of one config after its first: warm-up and timed."""
        return self.warmup + self.repeats

    def replace(self, **changes) -> Timing:
        return dataclasses.replace(self, **changes)


DEFAULT_TIMING = Timing()  # a careful measurement: the CLI and the library
QUICK_TIMING = Timing(warmup=2, repeats=10)  # a first look: the app's default

_DEVICE_PATTERN = re.compile(r"^(auto|cpu|gpu:\d+)$")
_DEVICES_PATTERN = re.compile(r"^(cpu|gpu):\d+(,(cpu|gpu):\d+)*$")
_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off", "")


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """One run: variant, sizes, precision, device, strategy, and task. The model maps (batch_size,
    height, time_steps, 1) to (batch_size, time_steps, outer_units); the defaults are the source
    question's. Under a strategy `batch_size` is global. `task` "inference" times one forward pass,
    "training" one training step with `optimizer`; `backend` is the Keras backend whose process runs
    it."""

    variant: str = "folded"
    batch_size: int = 8
    time_steps: int = 50
    height: int = 36
    filters: int = 16
    kernel_size: int = 3
    pool_height: int = 3
    inner_units: int = 48
    outer_units: int = 60
    precision: str = "float32"
    xla: bool = False
    lstm_kernel: str = "auto"
    device: str = "auto"
    strategy: str = "none"  # none | mirrored | multi_worker
    devices: str = ""  # mirrored replicas, e.g. "gpu:0,gpu:1"; "" = every local GPU (or CPU)
    task: str = "inference"  # inference | training
    optimizer: str = "sgd"  # sgd | adam: the update of a training step
    backend: str = "tensorflow"  # tensorflow | jax | torch: the Keras backend that runs it

    def __post_init__(self):
        known = tuple(VARIANTS)
        if self.variant not in known:
            raise SettingError(f"variant must be one of {', '.join(known)}; got {self.variant!r}.")
        for name in SIZE_FIELDS:
            check_whole(name, getattr(self, name), *BOUNDS[name])
        if self.height < self.pool_height:
            raise SettingError(
                f"height must be at least pool_height ({self.pool_height}) so the pooled height "
                f"is at least 1; got {self.height}."
            )
        if self.precision not in PRECISIONS:
            raise SettingError(
                f"precision must be one of {', '.join(PRECISIONS)}; got {self.precision!r}."
            )
        if not isinstance(self.xla, bool):
            raise SettingError(f"xla must be true or false; got {self.xla!r}.")
        if self.lstm_kernel not in LSTM_KERNELS:
            raise SettingError(
                f"lstm_kernel must be one of {', '.join(LSTM_KERNELS)}; got {self.lstm_kernel!r}."
            )
        if not isinstance(self.device, str) or not _DEVICE_PATTERN.match(self.device):
            raise SettingError(
                f"device must be auto, cpu or gpu:N (N a GPU index); got {self.device!r}."
            )
        for name, allowed in (("task", TASKS), ("optimizer", OPTIMIZERS), ("backend", BACKENDS)):
            if getattr(self, name) not in allowed:
                raise SettingError(
                    f"{name} must be one of {', '.join(allowed)}; got {getattr(self, name)!r}."
                )
        if self.backend not in VARIANTS[self.variant].backends:
            if BACKEND_RECORDS[self.backend].exported:  # a runtime runs what tf2onnx converts
                raise SettingError(conversion_refusal(self.variant))
            runs_on = ", ".join(VARIANTS[self.variant].backends)
            raise SettingError(
                f"variant {self.variant} runs on {runs_on} only (it calls TensorFlow itself); "
                f"got backend {self.backend!r}."
            )
        self._check_distribution()

    def _check_distribution(self):
        if self.strategy not in STRATEGIES:
            raise SettingError(
                f"strategy must be one of {', '.join(STRATEGIES)}; got {self.strategy!r}."
            )
        if not isinstance(self.devices, str) or not (
            self.devices == "" or _DEVICES_PATTERN.match(self.devices)
        ):
            raise SettingError(
                "devices must be empty or comma-separated cpu:N or gpu:N, e.g. gpu:0,gpu:1; "
                f"got {self.devices!r}."
            )
        names = self.device_list
        if len(set(names)) != len(names):
            raise SettingError(f"devices must name each device once; got {self.devices!r}.")
        if len({name.split(":")[0] for name in names}) > 1:
            raise SettingError(
                f"devices must be all CPUs or all GPUs, not a mix; got {self.devices!r}."
            )
        if names and self.strategy != "mirrored":
            raise SettingError(
                "devices lists the replicas of the mirrored strategy; set strategy to mirrored "
                f"or leave devices empty; got strategy {self.strategy!r}."
            )
        if self.task == "training" and self.strategy != "none":
            raise SettingError(
                "task training times one step on one device; strategy must be none; got "
                f"strategy {self.strategy!r}."
            )
        if self.strategy != "none" and self.device != "auto":
            raise SettingError(
                f"device must be auto under strategy {self.strategy}, which places the "
                f"replicas itself (name them in devices); got {self.device!r}."
            )
        if names:
            per_replica_batch(self.batch_size, len(names))

    @property
    def device_list(self) -> tuple[str, ...]:
        """The mirrored replicas named in `devices`, e.g. ("cpu:0", "cpu:1"); () when empty."""
        return tuple(self.devices.split(",")) if self.devices else ()

    @property
    def pooled_height(self) -> int:
        """The height left after pooling: the steps of each inner sub-sequence (12 by default)."""
        return self.height // self.pool_height

    @property
    def rows(self) -> int:
        """`pooled_height`'s old name, kept for code that reads it."""
        return self.pooled_height

    def replace(self, **changes) -> RunConfig:
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def to_strings(self) -> dict[str, str]:
        """The inverse of `from_strings`: every field as text."""
        return {
            name: (str(value).lower() if isinstance(value, bool) else str(value))
            for name, value in self.to_dict().items()
        }

    @classmethod
    def from_strings(cls, mapping: Mapping[str, str], **overrides) -> RunConfig:
        """Parses text values (URL parameters, CLI flags); unknown keys raise.

        Missing fields take their defaults; `overrides` are already-typed values applied first.
        """
        fields = {field.name: field for field in dataclasses.fields(cls)}
        values = dict(overrides)
        for name, text in mapping.items():
            if name not in fields:
                raise SettingError(
                    f"unknown setting {name!r}; known settings are {', '.join(fields)}."
                )
            values[name] = _parse_field(name, fields[name].type, str(text).strip())
        return cls(**values)


def per_replica_batch(batch_size: int, replicas: int) -> int:
    """The batch each replica runs; refuses a global batch that does not split evenly (a
    ragged split would give replicas different shapes, hence different traces and times)."""
    if batch_size % replicas:
        raise SettingError(
            f"batch_size {batch_size} does not split evenly over {replicas} replicas; use a "
            f"multiple of {replicas}."
        )
    return batch_size // replicas


def _parse_field(name: str, type_name: str, text: str):
    if type_name == "int":
        if not re.fullmatch(r"[+-]?\d{1,12}", text):
            low, high = BOUNDS[name]
            raise SettingError(
                f"{name} must be a whole number between {low} and {high}; got {text!r}."
            )
        return int(text)
    if type_name == "bool":
        lowered = text.lower()
        if lowered in _TRUE_WORDS:
            return True
        if lowered in _FALSE_WORDS:
            return False
        raise SettingError(f"{name} must be true or false; got {text!r}.")
    if name == "devices":
        return text.replace(" ", "").lower()  # "GPU:0, GPU:1" -> "gpu:0,gpu:1"
    return text
