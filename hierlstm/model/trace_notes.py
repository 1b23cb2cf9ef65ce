"""The trace's words: which catalogue message (`note.<path>` or `note.<variant>/<path>`) explains a
traced step, the numbers it is filled with (one replica's under a strategy), the note rendered, and
the Shape trace's table (the app's and a notebook's). No TensorFlow, no Streamlit."""

from __future__ import annotations

import string

from hierlstm.config import RunConfig
from hierlstm.i18n import DEFAULT_LANGUAGE, MESSAGES, t
from hierlstm.registry import VARIANTS
from hierlstm.tables import named

REPLICAS_KEY = "note.input.replicas"  # the input's note under a strategy: the split, then the input


def shape_text(shape) -> str:
    """(None, 6, 3) -> "(None, 6, 3)": a traced shape as the app's table and the CLI print it."""
    return "(" + ", ".join("None" if size is None else str(size) for size in shape) + ")"


def quantities(config: RunConfig) -> dict[str, int]:
    """Every number a note may mention, for `config`."""
    batch, time, pooled = config.batch_size, config.time_steps, config.pooled_height
    return {
        "batch": batch,
        "time": time,
        "pooled_height": pooled,
        "height": config.height,
        "filters": config.filters,
        "kernel": config.kernel_size,
        "pool": config.pool_height,
        "folded": batch * time,  # the folded axis, batch*time
        "chain": VARIANTS[config.variant].chain(pooled, time),
    }


def fields(key: str) -> list[str]:
    """The names message `key` takes (the same in every language; the catalogue tests check)."""
    template = MESSAGES[key][DEFAULT_LANGUAGE]
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def _pick(key: str, available: dict) -> tuple[str, dict]:
    """`key` and the values its message takes; KeyError for a key the catalogue lacks."""
    return key, {name: available[name] for name in dict.fromkeys(fields(key))}


def note(config: RunConfig, path: str) -> tuple[str, dict]:
    """(key, values) of the note on step `path` of `config.variant`."""
    specific = f"note.{config.variant}/{path}"
    return _pick(specific if specific in MESSAGES else f"note.{path}", quantities(config))


def replicas_note(config: RunConfig, global_batch: int, replicas: int) -> tuple[str, dict]:
    """(key, values) of the input's note when `replicas` replicas split `global_batch` and
    `config` is one replica's."""
    available = {**quantities(config), "global_batch": global_batch, "replicas": replicas}
    return _pick(REPLICAS_KEY, available)


def step_note(step, lang: str = DEFAULT_LANGUAGE) -> str:
    """The note of a `TraceStep` in `lang`."""
    return t(step.note_key, lang, **step.note_values)


def axes_text(axes, lang: str = DEFAULT_LANGUAGE) -> str:
    """("batch*time", "units") -> "batch × time · units", each axis in `lang`."""
    return " · ".join(
        " × ".join(t("axis." + part, lang) for part in axis.split("*")) for axis in axes
    )


def trace_table(steps, lang: str = DEFAULT_LANGUAGE):
    """The Shape trace's table of `steps` (`TraceStep`s), headed in `lang`: one row per step,
    symbolic beside concrete shape, axes, note, calls, params, MFLOPs, output KiB."""
    rows = [
        {
            "step": ("    └ " if step.depth else "") + step.path,
            "layer": step.layer,
            "symbolic": shape_text(step.symbolic_shape),
            "concrete": shape_text(step.concrete_shape),
            "axes": axes_text(step.axes, lang),
            "note": step_note(step, lang),
            "calls": step.calls,
            "params": step.params,
            "mflops": round(step.flops / 1e6, 3),
            "kib": round(step.output_bytes / 1024, 1),
        }
        for step in steps
    ]
    return named(rows, "trace.col.", lang)
