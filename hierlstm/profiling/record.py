"""A profile as a record, whichever backend's profiler made it (`ProfileResult`), and the folders
its captures go to: by default a new one under the data folder's profiles/, of which only the newest
HIERLSTM_KEEP_PROFILES (100) are kept, so a long-running server does not fill its disk. A
notebook shows a profile as the Profile page's tables: its op types, threads and streams, and a
device's kernels. No TensorFlow."""

from __future__ import annotations

import dataclasses
import io
import logging
import re
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd

from hierlstm import settings
from hierlstm.config import RunConfig, data_folder, default_logdir
from hierlstm.i18n import DEFAULT_LANGUAGE, MESSAGES, t
from hierlstm.model.cost import memory_parts
from hierlstm.refusals import Refusal, refusal_of
from hierlstm.tables import Shown, Table, in_ms, named

OUTSIDE = "outside any layer"  # the layers' row for op time no layer's name scope holds
TENSORFLOW_ATTRIBUTION = "per op and per layer"
_log = logging.getLogger(__name__)
# default_logdir's names (a JAX or torch capture's, the app's and the CLI's, end in its backend)
_CAPTURE = re.compile(r"^\d{8}T\d{6}_\d{6}Z-[a-z0-9_]+-(inference|training)(-[a-z]+)?$")
TOP_OP_TYPES = 12  # the op types a profile's table shows, the most time first


def suffixed(key: str, backend: str) -> str:
    """`key`.jax or `key`.torch, the backend's own wording, where the catalogue has one."""
    return f"{key}.{backend}" if f"{key}.{backend}" in MESSAGES else key


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class ProfileResult(Shown):
    """One profiled run; times are seconds per step. A notebook shows it as the Profile page's
    tables (`show("zh")`: in Chinese).

    layers: layer, type, time_s, ops, share (TensorFlow's also host_s, device_s), the model's
    top-level layers in order then `OUTSIDE`; empty on torch. op_types: type, time_s, ops, share.
    lines: line, op_s, busy_s. kernels: a device's kernels; empty on a CPU. `profiled_step_s`: the
    step markers' median (profiler on); `harness_median_s`: the harness samples' (profiler off)."""

    config: RunConfig
    steps: int
    warmup: int
    layers: pd.DataFrame
    op_types: pd.DataFrame
    lines: pd.DataFrame
    kernels: pd.DataFrame
    step_s: tuple[float, ...]
    profiled_step_s: float
    harness_median_s: float
    harness_repeats: int
    logdir: str
    trace: str  # the capture file, under logdir: an .xplane.pb, or torch's Chrome trace
    device: str
    kernel: str
    versions: dict[str, str]
    # the largest peak of one harness call, of the kind `peak_memory_kind` says ("" unmeasured),
    # and the last step in time (a `StepTimeline`, None where unread)
    peak_memory_bytes: int = 0
    peak_memory_kind: str = ""
    timeline: Any = None
    attribution: str = TENSORFLOW_ATTRIBUTION

    @property
    def op_s(self) -> float:
        frame = self.layers if not self.layers.empty else self.op_types
        return float(frame["time_s"].sum()) if not frame.empty else 0.0

    @property
    def outside_s(self) -> float:
        if self.layers.empty:
            return 0.0
        return float(self.layers.loc[self.layers["layer"] == OUTSIDE, "time_s"].sum())

    def top(self, frame: str, key: str) -> tuple[str, float]:
        """(name, share) of the row of `frame` ("layers" or "op_types") with the most time
        ("", 0.0) when it has none."""
        table = getattr(self, frame)
        if table.empty or table["time_s"].max() <= 0:
            return "", 0.0
        row = table.loc[table["time_s"].idxmax()]
        return str(row[key]), float(row["share"])

    def op_table(self, lang: str = DEFAULT_LANGUAGE) -> pd.DataFrame:
        """The `TOP_OP_TYPES` op types with the most time: ms and ops per step, share."""
        return named(in_ms(self.op_types.head(TOP_OP_TYPES)), "profile.column.", lang)

    def line_table(self, lang: str = DEFAULT_LANGUAGE) -> pd.DataFrame:
        """Each thread or stream: op ms and busy ms per step (none on a backend without)."""
        return named(in_ms(self.lines), "profile.column.", lang)

    def device_kernel_table(self, lang: str = DEFAULT_LANGUAGE) -> pd.DataFrame:
        """The kernels that ran on a device, per layer (none on a CPU)."""
        return named(in_ms(self.kernels), "profile.column.", lang)

    def summary(self, lang: str = DEFAULT_LANGUAGE) -> str:
        """Op time per step, its share of the profiled step, the time outside any layer."""
        return t(
            suffixed("profile.summary", self.config.backend),
            lang,
            op=self.op_s * 1e3,
            share=self.op_s / self.profiled_step_s,
            outside=self.outside_s * 1e3,
            device=self.device,
        )

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        shown = [Table(t("profile.ops", lang), self.op_table(lang), (self.summary(lang),))]
        if not self.lines.empty:
            shown.append(Table(t("profile.lines", lang), self.line_table(lang)))
        if not self.kernels.empty:
            shown.append(Table(t("profile.kernels", lang), self.device_kernel_table(lang)))
        return shown

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the CLI's `profile --json` document, under "profile")."""
        fields = ("steps", "warmup", "profiled_step_s", "harness_median_s", "harness_repeats")
        frames = ("layers", "op_types", "lines", "kernels")
        return {
            "variant": self.config.variant,
            "config": self.config.to_dict(),
            **{name: getattr(self, name) for name in fields},
            "step_s": list(self.step_s),
            "op_s": self.op_s,
            "outside_s": self.outside_s,
            **{name: getattr(self, name).to_dict(orient="records") for name in frames},
            **{name: getattr(self, name) for name in ("logdir", "trace", "device", "kernel")},
            "versions": dict(self.versions),
            "peak_memory_bytes": self.peak_memory_bytes,
            "peak_memory_kind": self.peak_memory_kind,
            "memory_parts": memory_estimate(self.config),
            "attribution": self.attribution,
        }


def memory_estimate(config: RunConfig) -> dict[str, int] | None:
    """A training step's memory by part and its total, in bytes (`memory_parts`); None for a
    forward pass, which keeps no gradients, slots or activations for a backward pass."""
    if config.task != "training":
        return None
    parts = memory_parts(config)
    return {**parts.as_dict(), "total": parts.total}


def kept_profiles() -> int:
    """HIERLSTM_KEEP_PROFILES: how many captures the default folder keeps (100)."""
    return settings.read("HIERLSTM_KEEP_PROFILES")


def new_capture_folder(config: RunConfig) -> Path:
    """A new default folder for `config`'s capture (`hierlstm.config.default_logdir`), the
    oldest captures pruned so that with this one the newest HIERLSTM_KEEP_PROFILES are kept."""
    prune_profiles(kept_profiles() - 1)
    return default_logdir(config)


def prune_profiles(keep: int | None = None) -> list[Path]:
    """Removes all but the newest `keep` (HIERLSTM_KEEP_PROFILES, 100) captures of the default
    folder (`default_logdir`'s parent; a capture in a folder of the caller's is never touched);
    the removed folders, oldest first. A removal the disk refuses is one warning in the log."""
    keep = kept_profiles() if keep is None else keep
    parent = data_folder() / "profiles"
    captures = sorted(path for path in parent.glob("*-*-*") if _CAPTURE.match(path.name))
    removed = captures[: max(0, len(captures) - keep)]
    refused = []
    for path in removed:
        shutil.rmtree(path, onerror=lambda _function, _path, info: refused.append(info[1]))
    if refused:  # the new capture is still written: one warning, as for the device lock
        refusal = refusal_of("prune", parent, refused[0]) or Refusal("prune", str(parent), "failed")
        _log.warning("%s", refusal.sentence())
    return removed


def zip_logdir(logdir: str | Path) -> bytes:
    """The log directory as the bytes of a .zip (paths relative to it, the capture among
    them), for a download."""
    root = Path(logdir)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(root).as_posix())
    return buffer.getvalue()
