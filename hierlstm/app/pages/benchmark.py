"""Benchmark: the selected variants timed in interleaved rounds, with charts of latency,
speed-up, first call, throughput, GFLOP/s and one variant's per-layer split; every run stored
(`hierlstm.measure`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from hierlstm import charts, measure
from hierlstm.app import caches, devices, diff_view, display, outcomes, runs, state
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig
from hierlstm.records import CompareResult, phase_frame
from hierlstm.refusals import Refused
from hierlstm.registry import VARIANTS
from hierlstm.timing import RUN_FAILURES, error_line, layer_breakdown

_ = state.text
KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)


def inputs(controls) -> str:
    """The variant timed layer by layer: folded by default, the answer's idea made explicit,
    the design most readers will adopt."""
    default = "folded" if "folded" in controls.variants else controls.variants[-1]
    column, _rest = st.columns([1, 2])
    return column.selectbox(
        _("bench.breakdown_variant"),
        controls.variants,
        index=controls.variants.index(default),
        key="breakdown_variant",
        help=_("bench.breakdown_variant.help"),
    )


def plan(controls, breakdown_variant: str) -> runs.Plan:
    configs = controls.configs
    breakdown = controls.config.replace(variant=breakdown_variant)  # timed layer by layer
    return runs.Plan(
        configs,
        functools.partial(run_benchmark, controls, breakdown_variant),
        runs.Workload((*configs, breakdown), controls.timing),
    )


@dataclasses.dataclass(frozen=True)
class BenchmarkOutcome:
    compared: CompareResult  # its results keep the RunConfigs they measured
    baseline: str
    breakdown: pd.DataFrame | None
    breakdown_variant: str
    breakdown_error: str
    stored: int
    settings: dict  # `settings_of` the controls it ran with
    ids: tuple[str, ...] = ()  # the stored rows of this run, in the order of its results

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """`CompareResult.to_frame()`, with each row's `label` (its backend beside the variant
        when several backends ran)."""
        frame = self.compared.to_frame()
        several = frame["backend"].nunique() > 1
        frame["label"] = [state.label(r.config, several) for r in self.compared.results]
        return frame


def baseline_of(configs: Sequence[RunConfig]) -> int:
    """The speed-ups' baseline: nested (on the server's own backend, TensorFlow, when it ran there
    too), else the first."""
    nested = [i for i, config in enumerate(configs) if config.variant == "nested"]
    here = [i for i in nested if state.runs_here(configs[i])]
    return (here or nested or [0])[0]


def run_benchmark(controls: Controls, breakdown_variant: str, progress: Progress):
    """The controls' configs (variants x backends) compared and stored, then the per-layer
    split of `breakdown_variant` on TensorFlow."""
    configs = controls.configs
    baseline = baseline_of(configs)
    stored = outcomes.stored_run(
        measure.compare_and_store,
        configs,
        controls.timing,
        baseline=baseline,
        on_progress=lambda f, m: progress(0.8 * f, m),
    )
    compared, ids = stored.value, stored.ids
    breakdown, breakdown_error = None, ""
    try:
        breakdown = layer_breakdown(
            controls.config.replace(variant=breakdown_variant),
            controls.timing,
            on_progress=lambda f, m: progress(0.8 + 0.2 * f, f"{breakdown_variant}: {m}"),
        )
    except RUN_FAILURES as error:
        breakdown_error = error_line(error)
    return BenchmarkOutcome(
        compared=compared,
        baseline=state.label(configs[baseline], controls.several_backends),
        breakdown=breakdown,
        breakdown_variant=breakdown_variant,
        breakdown_error=breakdown_error,
        stored=len(ids),
        settings=outcomes.settings_of(controls),
        ids=tuple(ids),
    )


def draw(controls, _breakdown_variant) -> None:
    config, timing = controls.config, controls.timing
    press_run = _(
        "bench.press_run",
        variants=", ".join(controls.variants),
        batch=config.batch_size,
        time=config.time_steps,
        warmup=timing.warmup,
        repeats=timing.repeats,
    )
    outcome = runs.shown_result(KEY, press_run, outcomes.settings_of(controls), stop=True)
    frame = outcome.frame
    measured = outcome.compared.results[0].config  # what ran: its task, optimizer, sizes
    training = measured.task == "training"

    ok = frame[frame["status"] == "ok"]
    for row in frame[frame["status"] != "ok"].itertuples():
        display.error(_("bench.failed", variant=row.label, error=row.error))
    if not ok.empty:
        fastest = ok.loc[ok["median_s"].idxmin()]
        summary = _(
            "bench.summary.fastest" + (".training" if training else ""),
            variant=fastest["label"],
            ms=fastest["median_s"] * 1e3,
            device=devices.device_name(fastest["device"]),
            batch=int(fastest["batch_size"]),
            time=int(fastest["time_steps"]),
        )
        if fastest["label"] != outcome.baseline and outcome.baseline in set(ok["label"]):
            summary += " " + _(
                "bench.summary.speedup",
                variant=fastest["label"],
                speedup=fastest["speedup_vs_baseline"],
                low=fastest["speedup_p10"],
                high=fastest["speedup_p90"],
                baseline=outcome.baseline,
            )
        rows = int(fastest["height"]) // int(fastest["pool_height"])  # sub-sequence length
        chains = ", ".join(
            f"{name} {VARIANTS[name].chain(rows, int(fastest['time_steps'])):,}"
            for name in dict.fromkeys(ok["variant"])
        )
        summary += " " + _("bench.summary.chain", chains=chains)
        st.success(summary, icon=":material/speed:")
    noisy = ok[ok["noisy"]]
    if not noisy.empty:
        ratios = ", ".join(f"{r.label} {r.iqr_s / r.median_s:.0%}" for r in noisy.itertuples())
        st.warning(_("bench.noisy", noisy=ratios), icon=":material/graphic_eq:")

    lang = controls.language
    display.chart_row(
        (
            charts.bars.latency_figure(frame, lang, task=measured.task),
            frame[["variant", "median_s", "p10_s", "p90_s"]],
            "bench-latency",
        ),
        (
            charts.bars.speedup_figure(frame, outcome.baseline, lang),
            frame[["variant", "speedup_vs_baseline", "speedup_p10", "speedup_p90"]],
            "bench-speedup",
        ),
    )
    if training:
        st.caption(_("bench.training", optimizer=measured.optimizer))
        phases = phase_frame(outcome.compared.results)
        sums = ", ".join(f"{r.variant} {r.phase_sum_s / r.median_s:.2f}" for r in ok.itertuples())
        memory = charts.training.training_memory_frame(frame)
        display.chart_row(
            (
                charts.training.phases_figure(phases, lang),
                phases,
                "bench-phases",
                _("bench.training.sum", ratios=sums),
            ),
            (charts.training.training_memory_figure(frame, lang), memory, "bench-train-memory"),
        )
    display.chart_row(
        (
            charts.bars.first_call_figure(frame, lang),
            frame[["variant", "first_call_s", "median_s"]],
            "bench-first-call",
        ),
        (
            charts.bars.throughput_figure(frame, lang),
            frame[["variant", "samples_per_s", "steps_per_s"]],
            "bench-throughput",
        ),
    )
    gflops = (
        charts.bars.gflops_figure(frame, lang),
        frame[["variant", "flops", "gflops_per_s"]],
        "bench-gflops",
    )
    if outcome.breakdown is not None:
        attrs = outcome.breakdown.attrs
        caption = _(
            "bench.layers.caption",
            model=attrs["model_median_s"] * 1e3,
            overhead=attrs["call_overhead_s"] * 1e3,
        )
        layers = charts.bars.layer_breakdown_figure(
            outcome.breakdown, outcome.breakdown_variant, lang
        )
        display.chart_row(gflops, (layers, outcome.breakdown, "bench-layers", caption))
    else:
        with display.chart_row(gflops, None)[1]:
            display.error(_("bench.layers.failed", error=outcome.breakdown_error))

    st.subheader(_("bench.kernels"))
    kernels = display.lstm_kernel_rows(outcome.compared.results)
    display.table(kernels, key="bench-kernels", static=True)

    st.subheader(_("bench.diff"))
    store = caches.result_store()
    try:  # the rows this run stored, and the earlier ones they are compared with
        ids = tuple(outcome.ids)
        stored_rows = caches.run_diff_rows(str(caches.store_path()), ids) if store and ids else None
    except Refused:  # readable when the run stored, refused since: the banner says why
        stored_rows = None
    if stored_rows is None:
        st.caption(_("bench.diff.unstored"))
    else:
        st.caption(_("bench.diff.caption"))
        against, rules = diff_view.against_previous(stored_rows, outcome.ids, lang)
        display.table(against, key="bench-diff")
        for rule in rules:
            st.caption(rule)

    st.subheader(_("bench.table"))
    display.table(display.headed(frame), key="bench-table")
    display.download(
        _("bench.download"), frame.to_csv(index=False), "hierlstm-benchmark.csv", "bench-download"
    )
    st.caption(_("bench.stored", count=outcome.stored, path=str(caches.store_path())))
