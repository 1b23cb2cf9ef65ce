"""The Your model page's work, ready to draw: an upload kept in a temporary folder (under a size
cap) or a built-in example, the audit and its check on the traced graph cached per file hash and
sizes, the rewrite's check and file, the timing as a run, its record stored (`yours_runs`), and
the tables in the session's language."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from hierlstm import settings
from hierlstm.app import caches
from hierlstm.app.state import language, text
from hierlstm.yours import audit, examples, load, rewrite, verify, walk

UPLOAD_ENV = "HIERLSTM_UPLOAD_MB"
_MB = 1024 * 1024


def upload_limit_mb() -> int:
    """HIERLSTM_UPLOAD_MB (20); a bad value is the page's ModelFileError, one line."""
    return settings.read(UPLOAD_ENV, error=load.ModelFileError)


def uploads_folder() -> Path:
    folder = Path(tempfile.gettempdir()) / "hierlstm-uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def kept_upload(name: str, data: bytes) -> Path:
    """An uploaded file written to the temporary folder, in a folder named by its content's hash
    under its own name (letters, digits, ".-_" kept; the suffix .h5 or .keras, which Keras reads
    the format by); ModelFileError when over `upload_limit_mb`."""
    limit = upload_limit_mb()
    if len(data) > limit * _MB:
        raise load.ModelFileError("yours.bad.size", mb=round(len(data) / _MB, 1), limit=limit)
    import hashlib
    import re

    stem = re.sub(r"[^\w.-]", "_", Path(name).stem)[:80] or "model"
    suffix = ".h5" if name.lower().endswith((".h5", ".hdf5")) else ".keras"
    folder = uploads_folder() / hashlib.sha256(data).hexdigest()[:16]
    folder.mkdir(exist_ok=True)
    path = folder / f"{stem}{suffix}"
    if not path.exists():
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_bytes(data)
        os.replace(partial, path)
    return path


DEFAULT_EXAMPLE = "time_distributed_unknown"  # the page's example before the reader picks one


def default_size(dimension: str) -> int:
    return walk.default_size(dimension)


def example_path(name: str) -> Path:
    return examples.example_path(name)


def examined_default() -> Examined:
    """The page's first view, the default example at its default sizes (the warm-up makes it
    when the pages are quiet, so the page's first visitor does not wait for it)."""
    path = example_path(DEFAULT_EXAMPLE)
    sha256 = load.file_hash(path)
    free = free_dimensions(str(path), sha256)
    return examined(str(path), sha256, tuple(sorted((d, default_size(d)) for d in free)), False)


@dataclasses.dataclass(frozen=True)
class Examined:
    """What the page draws for one file at one set of sizes, before any timing."""

    name: str
    sha256: str
    audit: audit.Audit
    verification: verify.Verification
    changes: tuple[rewrite.Change, ...]
    check: rewrite.Check | None
    rewritten: bytes  # the rewritten model's .keras file, b"" when nothing applies


@st.cache_resource(max_entries=16, show_spinner=False)
def _model(path: str, sha256: str):
    return load.load_model_file(path)


def free_dimensions(path: str, sha256: str) -> tuple[str, ...]:
    """The names of the model's None dimensions, which the page asks a size for."""
    model, _info = _model(path, sha256)
    return tuple(dimension.name for dimension in audit.free_dimensions(model))


@st.cache_data(max_entries=32, show_spinner=False)
def examined(path: str, sha256: str, sizes: tuple, jit_compile: bool) -> Examined:
    """The audit at `sizes` ((name, size) pairs), its check on the graph traced as a GPU traces
    it, and the rewrite with its check; ModelFileError for a refused file."""
    with caches.COMPUTING:
        return _examine(path, sha256, sizes, jit_compile)


def _examine(path: str, sha256: str, sizes: tuple, jit_compile: bool) -> Examined:
    model, info = _model(path, sha256)
    result = audit.audit(model, dict(sizes), jit_compile=jit_compile)
    rewritten, changes = rewrite.rewrite(model)
    check, data = None, b""
    if rewritten is not None:
        check = rewrite.check(model, rewritten, result.input_shapes)
        with tempfile.TemporaryDirectory() as folder:
            saved = Path(folder) / f"{info.name}-rewritten.keras"
            rewritten.save(saved)
            data = saved.read_bytes()
    return Examined(
        name=info.name,
        sha256=sha256,
        audit=result,
        verification=verify.verify(model, result),
        changes=tuple(changes),
        check=check,
        rewritten=data,
    )


def timed(path: str, sha256: str, shapes: list[tuple], repeats: int, progress) -> dict:
    """The original and its rewrite timed side by side (a run's work, `measure`'s), its row
    stored with the model's name and file hash; a refused write is noted, the timing kept."""
    from hierlstm.measure import NotStored, rewrite_bench_and_store

    model, info = _model(path, sha256)
    try:
        _changes, _check, timing, _id = rewrite_bench_and_store(
            model, info, shapes, repeats, caches.result_store(), on_progress=progress
        )
        caches.note_write(None)
    except NotStored as error:
        caches.note_write(error.refused)
        _changes, _check, timing, _id = error.measured
    return {"timing": timing, "settings": {"sha256": sha256, "shapes": shapes}}


def trace_frame(result: audit.Audit) -> pd.DataFrame:
    rows = [
        {
            text("yours.col.layer"): "   " * (step.depth - 1) + "↳ " * bool(step.depth) + step.path,
            text("yours.col.class"): step.layer,
            text("yours.col.symbolic"): str(step.symbolic_shape),
            text("yours.col.concrete"): str(step.concrete_shape),
            text("yours.col.params"): f"{step.params:,}",
            text("yours.col.flops"): "-" if step.flops is None else f"{step.flops:,}",
        }
        for step in result.steps
    ]
    return pd.DataFrame(rows)


def audit_frame(result: audit.Audit, verification: verify.Verification) -> pd.DataFrame:
    """A row per recurrent layer and backend: the kernel a GPU runs and why; on TensorFlow
    whether the traced graph agrees."""
    lang = language()
    agrees = {check.path: check.agrees for check in verification.layers}
    rows = [
        {
            text("yours.col.layer"): row.path,
            text("yours.col.class"): row.layer,
            text("yours.col.backend"): backend,
            text("yours.col.kernel"): kernel.kernel,
            text("yours.col.verified"): (
                text("yours.verified.yes" if agrees[row.path] else "yours.verified.no")
                if backend == "tensorflow"
                else ""
            ),
            text("yours.col.why"): kernel.text(lang),
        }
        for row in result.recurrent
        for backend, kernel in row.kernels.items()
    ]
    return pd.DataFrame(rows)


def timing_frame(timing: rewrite.Timing) -> pd.DataFrame:
    rows = []
    for phase in ("forward", "step"):
        original, rewritten = (timing.stats(model, phase) for model in ("original", "rewritten"))
        rows.append(
            {
                text("yours.col.phase"): text(f"yours.phase.{phase}"),
                text("yours.col.original"): f"{original.median * 1e3:.3g} ms",
                text("yours.col.rewritten"): f"{rewritten.median * 1e3:.3g} ms",
                text("yours.col.speedup"): f"{timing.speedup(phase):.2f}×",
                text("yours.col.rounds"): len(timing.samples[("original", phase)]),
            }
        )
    return pd.DataFrame(rows)
