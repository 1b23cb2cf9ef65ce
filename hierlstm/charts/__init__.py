"""The charts, without Streamlit: frames and records in, plotly figures out, titled in English or
Chinese, for the app's pages and for Python (a notebook: `from hierlstm import charts`, then
`charts.bars.latency_figure(frame, "en")`). A module a kind of chart, each loaded when first read:
`axis_flow` (the Shape trace's axes), `bars` (a benchmark's times), `profile` (a profile's
layers, timeline and memory), `scaling` (sweeps and replicas), `training` (a training step's
phases and memory), `values` (every layer's values), `whatif` (a change from the untouched run,
the trained prediction, the map of the hidden states), `style` (the house style they share)."""

import importlib

MODULES = ("axis_flow", "bars", "profile", "scaling", "style", "training", "values", "whatif")


def __getattr__(name: str):
    if name not in MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")


def __dir__() -> list[str]:
    return list(MODULES)
