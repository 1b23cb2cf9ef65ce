"""The app's charts, without Streamlit, for its pages and for Python (a notebook): records and
frames in, plotly figures out, titled in English ("en") or Chinese ("zh"). The figures a reader
asks for first are names of the package (`charts.axis_flow_figure(trace)`); every figure is in
the module of its kind, each loaded when first read: `axis_flow` (the Shape trace's axes), `bars`
(a benchmark's times), `profile` (a profile's layers, timeline and memory), `scaling` (sweeps and
replicas), `training` (a training step's phases and memory), `values` (every layer's values),
`agreement` (the variants against the oracle), `learning` (a learning run's curves), `whatif` (a
change from the untouched run, the trained prediction, the map of the hidden states), `style`
(the house style they share)."""

import importlib

from hierlstm._lazy import lazy_exports

MODULES = ("agreement", "axis_flow", "bars", "learning", "profile", "scaling", "style", "training")
MODULES += ("values", "whatif")
EXPORTS = {
    "axis_flow_figure": "axis_flow",  # where each axis goes: a trace
    "latency_figure": "bars",  # time with its spread: a comparison
    "speedup_figure": "bars",
    "scaling_figure": "scaling",  # a sweep, the crossings marked
    "crossovers": "scaling",
    "values_figures": "values",  # every layer's heatmaps, (t, s) framed
    "agreement_figure": "agreement",  # the variants against the oracle
    "learning_figure": "learning",  # a learning run's curves
    "curve_figure": "learning",
}
_exported, _listed = lazy_exports(__name__, EXPORTS)


def __getattr__(name: str):
    if name in MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    return _exported(name)


def __dir__() -> list[str]:
    return sorted([*MODULES, *_listed()])
