"""Your model: a .keras file of your own (or a built-in example), traced inside its wrappers, every
recurrent layer's kernel per backend and why, checked on the graph traced as a GPU traces it, and
the rewrite with its check; Run times the original and the rewrite side by side. An upload is kept
in a temporary folder (under the upload cap, its archive bounded by `hierlstm.yours.archive`); the
audit and its check are cached per file hash and sizes; the timing's record is stored
(`yours_runs`). Its warm-up examines the default example."""

from __future__ import annotations

import collections
import dataclasses
import functools
import os
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from hierlstm.app import caches, display, outcomes, runs
from hierlstm.app.state import labeller, language, text
from hierlstm.registry import BACKEND_RECORDS
from hierlstm.yours import archive, audit, examples, load, rewrite, verify, walk

KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)
_MB = 1024 * 1024


def uploads_folder() -> Path:
    folder = Path(tempfile.gettempdir()) / "hierlstm-uploads"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def kept_upload(name: str, data: bytes) -> Path:
    """An uploaded file written to the temporary folder, in a folder named by its content's hash
    under its own name (letters, digits, ".-_" kept; the suffix .h5 or .keras, which Keras reads
    the format by); ModelFileError when over the upload cap (`archive.upload_cap_mb`)."""
    limit = archive.upload_cap_mb()
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


def warm_up() -> Examined:
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


def timed(path: str, sha256: str, shapes: list[tuple], repeats: int, progress) -> outcomes.Outcome:
    """The original and its rewrite timed side by side (a run's work, `measure`'s), its row
    stored with the model's name and file hash; a refused write is noted, the timing kept."""
    from hierlstm.measure import rewrite_bench_and_store

    model, info = _model(path, sha256)
    stored = outcomes.stored_run(
        rewrite_bench_and_store, model, info, shapes, repeats, on_progress=progress
    )
    timing = stored.value[2] if stored.value is not None else None  # None: nothing rewritten
    from hierlstm.backends.exported import bench_model
    from hierlstm.model.export import ExportError

    progress(0.9, "exporting to ONNX and timing it on the runtimes")
    try:  # the model on the runtimes beside TensorFlow; a layer the converter rejects: its line
        on_runtimes = bench_model(model, shapes, repeats).to_dict()
    except ExportError as error:
        on_runtimes = {"refused": str(error)}
    return outcomes.Outcome({"sha256": sha256, "shapes": shapes}, records=(timing, on_runtimes))


def runtimes_frame(part: dict) -> pd.DataFrame:
    """A row per backend: the forward pass's median, against TensorFlow's, and how far the
    runtime's outputs are from Keras's."""
    medians = part["median_s"]
    rows = [
        {
            text("yours.col.backend"): name,
            text("yours.col.forward"): f"{median * 1e3:.3g} ms",
            text("yours.col.vs_tensorflow"): f"{median / medians['tensorflow']:.2f}×",
            text("yours.col.diff"): (
                f"{part['max_abs_diff'][name]:.1e}" if name in part["max_abs_diff"] else ""
            ),
        }
        for name, median in medians.items()
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


@dataclasses.dataclass(frozen=True)
class Chosen:
    """The file the page examined, and the shapes its Run times."""

    path: Path
    sha256: str
    shapes: list[tuple]
    rewritten: bool  # False: nothing to rewrite, Run times the original alone


def inputs(controls) -> Chosen:
    """The file (an example or an upload) and its sizes, examined: its trace, audit, check and
    rewrite drawn."""
    _ = text
    source = st.radio(
        _("yours.source"),
        ["example", "upload"],
        format_func=labeller("yours.source."),
        horizontal=True,
        key="yours_source",
    )
    try:
        if source == "example":
            names = list(examples.EXAMPLES)
            name = st.selectbox(
                _("yours.example"),
                names,
                index=names.index(DEFAULT_EXAMPLE),
                format_func=labeller("yours.example."),
                key="yours_example",
            )
            path = example_path(name)
        else:
            limit = archive.upload_cap_mb()
            uploaded = st.file_uploader(
                _("yours.upload", limit=limit), type=["keras", "h5"], key="yours_upload"
            )
            if uploaded is None:
                st.stop()
            path = kept_upload(uploaded.name, uploaded.getvalue())
        sha256 = load.file_hash(path)
        free = free_dimensions(str(path), sha256)
        sizes = {}
        columns = st.columns(max(len(free), 1) + 1)
        for column, dimension in zip(columns, free, strict=False):
            default = default_size(dimension)
            sizes[dimension] = column.number_input(
                dimension, 1, 512, default, key=f"yours_size_{dimension}"
            )
        jit = columns[-1].checkbox(_("yours.jit"), key="yours_jit", help=_("yours.jit.help"))
        with st.spinner(_("yours.examining")):
            seen = examined(str(path), sha256, tuple(sorted(sizes.items())), jit)
    except load.ModelFileError as error:  # a bad file: one line, the page goes on serving
        st.error(error.sentence(language()), icon=":material/block:")
        st.stop()

    result = seen.audit
    st.subheader(_("yours.trace", name=seen.name, sha=sha256))
    wide = {_("yours.col.layer"): st.column_config.TextColumn(width="large")}
    display.table(result.layer_table(language()), key="yours-trace", column_config=wide)
    if result.uncounted:
        st.caption(_("yours.uncounted", layers=", ".join(result.uncounted)))

    st.subheader(_("yours.audit"))
    for note in result.notes:
        st.info(note.text(language()), icon=":material/info:")
    if result.recurrent:
        kernels = result.kernel_table(language(), seen.verification)
        display.table(kernels, key="yours-audit", static=True)
        verdict = "yours.verified.all" if seen.verification.agrees else "yours.verified.some"
        st.caption(_(verdict))
    for pitfall in result.pitfalls:
        st.warning(pitfall.text(language()), icon=":material/warning:")
    for suggestion in result.suggestions:
        st.info(suggestion.text(language()), icon=":material/lightbulb:")

    st.subheader(_("yours.rewrite"))
    if not seen.changes:  # nothing to rewrite: the original is still timed, here and exported
        st.caption(_("yours.rewrite.none"))
        return Chosen(path, sha256, result.input_shapes, rewritten=False)
    for change in seen.changes:
        st.markdown(f"- `{change.path}`: `{change.before}` → `{change.after}`")
    check = seen.check
    st.markdown(
        _(
            "yours.check.match" if check.matches else "yours.check.differ",
            outputs=f"{check.output_diff:.3g}",
            gradients=f"{check.gradient_diff:.3g}",
        )
    )
    display.download(
        _("yours.download"), seen.rewritten, f"{seen.name}-rewritten.keras", "yours-download"
    )

    return Chosen(path, sha256, result.input_shapes, rewritten=True)


def plan(controls, chosen: Chosen) -> runs.Plan:
    repeats = controls.timing.repeats
    work = functools.partial(timed, str(chosen.path), chosen.sha256, chosen.shapes, repeats)
    return runs.Plan((controls.config,), work)


def draw(controls, chosen: Chosen) -> None:
    _ = text
    sha256, shapes = chosen.sha256, chosen.shapes
    settings = {"sha256": sha256, "shapes": shapes}
    asked = _("yours.press_run" if chosen.rewritten else "yours.press_run.original")
    outcome = runs.shown_result(KEY, asked, settings)
    if outcome is not None:
        if outcome.records[0] is not None:
            st.subheader(_("yours.timing"))
            display.table(timing_frame(outcome.records[0]), key="yours-timing", static=True)
            st.caption(_("yours.timing.caption"))
        runtimes_section(outcome.records[1])


def runtimes_section(part: dict) -> None:
    """The model exported and timed on the runtimes, or the one line saying why it was not."""
    _ = text
    st.subheader(_("yours.runtimes"))
    if "refused" in part:  # English from the converter's check; the page goes on
        st.warning(_("yours.runtimes.refused", reason=part["refused"]), icon=":material/block:")
        return
    display.table(runtimes_frame(part), key="yours-runtimes", static=True)
    counts = collections.Counter((entry["layer"], entry["op"]) for entry in part["fused"])
    fused = ", ".join(f"{layer} ({n} {op})" for (layer, op), n in counts.items())
    st.caption(_("yours.runtimes.fused", layers=fused) if fused else _("yours.runtimes.unfused"))
    for name in part["missing"]:  # not installed: how to install it
        extra = BACKEND_RECORDS[name].extra
        st.caption(
            "⚠️ " + _("control.backends.missing", backend=name, switch=extra.upper(), extra=extra)
        )
