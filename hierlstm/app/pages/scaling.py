"""Scaling: latency of the selected variants over time steps or batch size (log-log), the
fitted cost per step, the dependent-chain length per variant and where the curves cross; or
throughput and scaling efficiency over the number of mirrored replicas (tf.distribute). Each
point is stored as it finishes (`hierlstm.measure`)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import streamlit as st

from hierlstm import charts, measure
from hierlstm.app import caches, devices, display, outcomes, runs, state
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import SWEEP_AXES, RunConfig
from hierlstm.timing.points import sweep_table

_ = state.text
KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)
DEFAULT_VALUES = {"time_steps": "10, 20, 50, 100", "batch_size": "1, 4, 16, 64", "replicas": "1, 2"}
AXES = (*SWEEP_AXES, "replicas")


@dataclasses.dataclass(frozen=True)
class Sweep:
    """The page's own inputs: the axis swept, its values, and why they cannot run ("")."""

    axis: str
    values: tuple[int, ...]
    problem: str


def inputs(controls) -> Sweep:
    for axis_name, default in DEFAULT_VALUES.items():
        st.session_state.setdefault(f"sweep_values_{axis_name}", default)
    left, right = st.columns([1, 2])
    axis = left.radio(
        _("scaling.axis"),
        AXES,
        key="sweep_axis",
        horizontal=True,
        format_func=state.labeller("axis_name."),
        persist_state="session",
    )
    raw_values = right.text_input(
        _("scaling.values"),
        key=f"sweep_values_{axis}",
        help=_("scaling.values.help"),
        persist_state="session",
        on_change=state.APPLIED_ON_RUN,
    )
    values, problem = state.parse_values(raw_values, axis)
    if problem:
        display.error(problem)
    if axis == "replicas" and controls.config.task == "training":
        problem = _("scaling.replicas.training")
        st.error(problem, icon=":material/block:")
    return Sweep(axis, tuple(values), problem)


def plan(controls, sweep: Sweep) -> runs.Plan | None:
    """One point per (variant, value), the largest value's configs checked against the limits."""
    if sweep.problem:
        return None
    axis, values = sweep.axis, sweep.values
    if axis == "replicas":  # weak scaling: n replicas run n x the sidebar's batch
        base = replica_configs(controls)
        configs = [c.replace(batch_size=c.batch_size * max(values)) for c in base]
        points = tuple(c.replace(batch_size=c.batch_size * n) for c in base for n in values)
        work = functools.partial(run_replica_sweeps, controls, values)
    else:
        configs = [c.replace(**{axis: max(values)}) for c in controls.configs]
        points = tuple(c.replace(**{axis: v}) for c in controls.configs for v in values)
        work = functools.partial(run_sweeps, controls, axis, values)
    return runs.Plan(tuple(configs), work, runs.Workload(points, controls.timing))


def run_sweeps(controls: Controls, axis: str, values: Sequence[int], progress: Progress):
    """Every selected variant swept over `axis`; each point is stored as it finishes."""
    frame = outcomes.each_variant(
        controls.configs,
        progress,
        lambda config, on_progress: (
            outcomes.stored_run(
                measure.sweep_and_store,
                config,
                axis,
                values,
                controls.timing,
                on_progress=on_progress,
            ).value
        ),
    )
    return outcomes.Outcome({**outcomes.settings_of(controls), "axis": axis}, frame)


def replica_configs(controls: Controls) -> list[RunConfig]:
    """The selected variants as one replica's run: the sidebar's batch is each replica's.
    tf.distribute is TensorFlow's, so each variant runs there whatever the Backend choice."""
    variants = dict.fromkeys(config.variant for config in controls.configs)
    return [
        controls.config.replace(variant=name, strategy="mirrored", device="auto")
        for name in variants
    ]


def run_replica_sweeps(controls: Controls, counts: Sequence[int], progress: Progress):
    """Every selected variant on 1, 2, ... mirrored replicas (weak scaling); each measured
    count is stored as it finishes."""

    def run(config, on_progress):
        frame = outcomes.stored_run(
            measure.replica_sweep_and_store,
            config,
            counts,
            controls.timing,
            on_progress=on_progress,
        ).value
        return frame.assign(variant=config.variant)[["variant", *frame.columns]]

    frame = outcomes.each_variant(replica_configs(controls), progress, run)
    return outcomes.Outcome({**outcomes.settings_of(controls), "axis": "replicas"}, frame)


def draw(controls, sweep: Sweep) -> None:
    lang = controls.language
    press_run = _(
        "scaling.press_run",
        variants=", ".join(controls.variants),
        axis=_("axis_name." + sweep.axis),
        values=", ".join(map(str, sweep.values)),
    )
    outcome = runs.shown_result(
        KEY, press_run, {**outcomes.settings_of(controls), "axis": sweep.axis}
    )
    if outcome is not None:
        frame, swept = outcome.frame, outcome.settings["axis"]
        for row in frame[frame["status"] != "ok"].itertuples():
            value = row.replicas if swept == "replicas" else row.value
            display.error(_("scaling.failed", variant=row.variant, value=value, error=row.error))
    if outcome is not None and swept == "replicas":
        display.chart_row(
            (
                charts.scaling.replica_throughput_figure(frame, lang),
                frame[["variant", "replicas", "batch_size", "samples_per_s", "status"]],
                "replicas-throughput",
            ),
            (
                charts.scaling.replica_efficiency_figure(frame, lang),
                frame[
                    [
                        "variant",
                        "replicas",
                        "scaling_efficiency",
                        "efficiency_p10",
                        "efficiency_p90",
                    ]
                ],
                "replicas-efficiency",
            ),
        )
        st.caption(_("scaling.replicas.weak"))
        if not any(name.startswith("gpu") for name in devices.visible_devices()):
            st.caption(_("scaling.replicas.cpu_note"))
        display.table(frame, key="scaling-table", height=300)
    elif outcome is not None:
        display.chart(
            charts.scaling.scaling_figure(frame, swept, lang),
            frame[["variant", "axis", "value", "median_s", "p10_s", "p90_s", "status"]],
            "scaling-latency",
        )
        crossings = charts.scaling.crossovers(frame)
        if crossings.empty:
            st.caption(_("scaling.no_crossover"))
        for row in crossings.itertuples():
            axis_name = _("axis_name." + swept)
            crossing = {"first": row.first, "second": row.second, "value": row.value}
            st.caption(_("scaling.crossover", axis=axis_name, **crossing))
        fit = charts.scaling.cost_per_step(frame)
        figure = charts.scaling.cost_per_step_figure(fit, swept, lang)
        _chart, right = display.chart_row(
            (figure, fit, "scaling-cost", _("scaling.fit.caption." + swept)), None
        )
        with right:
            display.table(sweep_table(frame, lang), key="scaling-table", height=360)

    st.subheader(_("scaling.chain.title"))
    st.markdown(_("scaling.chain.intro"))
    times = (
        sweep.values if sweep.axis == "time_steps" and sweep.values else [10, 20, 50, 100, 200, 500]
    )
    chains = charts.scaling.chain_frame(controls.variants, controls.config.pooled_height, times)
    figure = caches.figure(
        ("chain", chains, lang), lambda: charts.scaling.chain_figure(chains, lang)
    )
    display.chart(figure, chains, key="scaling-chain")
