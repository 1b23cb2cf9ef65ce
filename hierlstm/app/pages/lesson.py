"""Lesson: the source question and its answer as a guided walk, each claim beside a live figure
or number from this machine. Its run times what the claims quote (`lesson_configs`); the
backends' numbers are the newest stored comparison (`latest_comparison`)."""

from __future__ import annotations

import functools

import keras
import pandas as pd
import streamlit as st

from hierlstm import charts, measure
from hierlstm.app import backend_numbers, banner, caches, display, outcomes, runs, sidebar, state
from hierlstm.config import RunConfig
from hierlstm.hardware import precision_supported
from hierlstm.model.trace_notes import shape_text
from hierlstm.records import phase_frame
from hierlstm.registry import VARIANTS

_ = state.text
KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)
PRECISIONS = ("mixed_float16", "mixed_bfloat16")
TRAINED = [name for name in ("nested", "folded", "fused") if name in VARIANTS]  # section 10


def measured_variants(time_steps: int) -> list[str]:
    """Every variant that can take any length, and the answer's own TimeDistributed while its
    trace stays short."""
    measured = [name for name in VARIANTS if not VARIANTS[name].static_time]
    if time_steps <= 100:
        measured += [name for name in VARIANTS if VARIANTS[name].static_time]
    return measured


def lesson_configs(config: RunConfig) -> list[RunConfig]:
    """What the lesson measures: `measured_variants`, folded at each reduced precision, and the
    trained variants' training step."""
    base = config.replace(precision="float32", task="inference")
    configs = [base.replace(variant=name) for name in measured_variants(config.time_steps)]
    configs += [base.replace(variant="folded", precision=p) for p in PRECISIONS]
    return configs + [base.replace(variant=name, task="training") for name in TRAINED]


def plan(controls, _inputs) -> runs.Plan:
    configs = lesson_configs(controls.config)
    return runs.Plan(tuple(configs), functools.partial(measure_lesson, controls, configs))


def measure_lesson(controls, configs: list[RunConfig], progress) -> outcomes.Outcome:
    result = outcomes.stored_run(
        measure.compare_and_store,
        configs,
        controls.timing,
        baseline=measured_variants(controls.config.time_steps).index("nested"),
        on_progress=progress,
    ).value
    frame = result.to_frame()
    frame["label"] = [f"{c.variant} · {c.precision} · {c.task}" for c in configs]
    return outcomes.Outcome(outcomes.settings_of(controls), frame, tuple(result.results))


def draw(controls, _inputs) -> None:
    lang, config = controls.language, controls.config
    pooled_height, time_steps = config.pooled_height, config.time_steps
    press_run = _("lesson.press_run", batch=config.batch_size, time=time_steps)
    outcome = runs.shown_result(KEY, press_run, outcomes.settings_of(controls))
    frame = outcome.frame if outcome else None

    def measured(variant: str, precision: str = "float32", task: str = "inference"):
        """The lesson run's row for a variant, precision and task, or None (not run, or failed)."""
        if frame is None:
            return None
        found = frame[
            (frame["variant"] == variant)
            & (frame["precision"] == precision)
            & (frame["task"] == task)
            & (frame["status"] == "ok")
        ]
        return None if found.empty else found.iloc[0]

    def quote(name: str) -> None:
        st.markdown(f"> {_('lesson.quote.' + name)}")

    # 1. The question --------------------------------------------------------------------------
    st.header(_("lesson.q.title"))
    st.markdown(_("lesson.q.body"))
    steps = caches.trace(config.replace(variant="folded"))
    shape_rows = [
        {
            "step": s.path,
            "concrete": shape_text(s.concrete_shape),
            "note": display.step_note(s),
        }
        for s in steps
        if s.depth == 0
    ]
    display.table(display.named(shape_rows, "trace.col."), key="lesson-shapes", static=True)
    st.page_link("app_pages/inside.py", label=_("inside.link"), icon=":material/grid_on:")

    # 2. Why the forget gate matters: clamped, in the oracle --------------------------------------
    st.header(_("lesson.forget.title"))
    st.markdown(_("lesson.forget.body", pooled_height=pooled_height))
    memory = caches.forget_memory(config, controls.timing.seed)
    first = {name: values[0] for name, values in memory.items()}
    display.chart(
        caches.figure(
            ("lesson-forget", memory, lang), lambda: charts.whatif.memory_figure(memory, lang)
        ),
        pd.DataFrame({"inner_step": range(pooled_height), **memory}),
        "lesson-forget",
        _("lesson.forget.here", **first),
    )
    st.page_link("app_pages/inside.py", label=_("lesson.forget.link"), icon=":material/science:")

    # 3. Why nesting is slow ---------------------------------------------------------------------
    st.header(_("lesson.chain.title"))
    quote("nesting")
    left, right = st.columns([2, 3])
    with left:
        chain = {
            name: VARIANTS[name].chain(pooled_height, time_steps) for name in ("nested", "folded")
        }
        st.markdown(_("lesson.chain.body", pooled_height=pooled_height, time=time_steps, **chain))
        nested, folded = measured("nested"), measured("folded")
        for column, name, row in zip(st.columns(2), chain, (nested, folded), strict=True):
            column.metric(_("lesson.metric.chain", variant=name), f"{chain[name]:,}")
            if nested is not None and folded is not None:
                speedup = _("lesson.metric.faster", speedup=row["speedup_vs_baseline"])
                column.metric(
                    _("lesson.metric.median", variant=name),
                    display.format_ms(row["median_s"]),
                    delta=speedup if name == "folded" else None,
                    delta_color="normal",
                )
    with right:
        chains = charts.scaling.chain_frame(
            list(VARIANTS), pooled_height, [10, 20, 50, 100, 200, 500, time_steps]
        )
        figure = caches.figure(
            ("chain", chains, lang), lambda: charts.scaling.chain_figure(chains, lang)
        )
        display.chart(figure, chains, key="lesson-chain")

    # 4. TimeDistributed in Keras 3 ---------------------------------------------------------------
    st.header(_("lesson.td.title"))
    quote("time_distributed")
    st.markdown(_("lesson.td.body", time=time_steps))
    td = measured("time_distributed")
    if td is not None:
        st.metric(
            _("lesson.metric.first_call", variant="time_distributed"),
            display.format_ms(td["first_call_s"]),
            help=_("lesson.td.first_call.help", time=time_steps),
        )
    st.markdown(_("lesson.td.bug"))
    if st.button(_("lesson.td.reproduce"), key="lesson_pitfall", icon=":material/bug_report:"):
        st.session_state["lesson_pitfall_shown"] = True
    if st.session_state.get("lesson_pitfall_shown"):
        with st.spinner(_("lesson.td.running")):
            pitfalls = caches.pitfall_outcomes(config.outer_units)
        pitfall_rows = [
            {
                "input": f"({o.batch_size}, {config.height}, {o.time_steps}, 1)",
                "expected": shape_text(o.expected_shape),
                "actual": shape_text(o.actual_shape)
                if o.actual_shape
                else _("lesson.td.error", error=o.error),
                "verdict": "✗" if o.broken else "✓",
            }
            for o in pitfalls
        ]
        display.table(
            display.named(pitfall_rows, "lesson.td.col."), key="lesson-pitfall", static=True
        )
        st.caption(_("lesson.td.bug.caption"))

    # 5. CuDNNLSTM is gone ------------------------------------------------------------------------
    st.header(_("lesson.cudnn.title"))
    quote("cudnn")
    st.markdown(
        _("lesson.cudnn.body", has=hasattr(keras.layers, "CuDNNLSTM"), keras=keras.__version__)
    )
    st.markdown(_("lesson.cudnn.here", status=banner.cudnn_status()))
    if frame is not None:
        float32 = [
            result
            for result in outcome.records
            if result.config.precision == "float32" and result.config.task == "inference"
        ]
        display.table(display.lstm_kernel_rows(float32), key="lesson-kernels", static=True)

    # 6. Weight sharing ---------------------------------------------------------------------------
    st.header(_("lesson.sharing.title"))
    quote("sharing")
    reports = caches.sharing_reports_of(config)
    cell = reports["shared_cell"]
    st.markdown(
        _(
            "lesson.sharing.body",
            same=cell.same_objects,
            params=cell.param_count,
            unshared=cell.unshared_param_count,
            leak=cell.state_leak_diff,
        )
    )
    shared = measured("shared_cell")
    if shared is not None and folded is not None:
        st.markdown(
            _(
                "lesson.sharing.cost",
                cell=display.format_ms(shared["median_s"]),
                layer=display.format_ms(folded["median_s"]),
            )
        )
    st.page_link(
        "app_pages/weight_sharing.py", label=_("lesson.sharing.link"), icon=":material/share:"
    )

    # 7. Mixed precision --------------------------------------------------------------------------
    st.header(_("lesson.precision.title"))
    quote("precision")
    st.markdown(_("lesson.precision.body"))
    for precision in PRECISIONS:
        _ok, message = precision_supported(precision, config.device)
        if message:
            st.caption(sidebar.precision_message(precision, config.device, message))
    if frame is not None:
        precision_rows = frame[(frame["variant"] == "folded") & (frame["task"] == "inference")]
        display.chart(
            charts.bars.timing_figure(precision_rows, "label", _("lesson.precision.chart"), lang),
            precision_rows[["label", "median_s", "p10_s", "p90_s", "status", "error"]],
            key="lesson-precision",
        )

    # 8. vectorized_map ---------------------------------------------------------------------------
    st.header(_("lesson.vmap.title"))
    quote("vmap")
    st.markdown(
        _("lesson.vmap.body", chain=VARIANTS["vectorized_map"].chain(pooled_height, time_steps))
    )
    if frame is not None:
        chosen = frame[(frame["precision"] == "float32") & (frame["task"] == "inference")]
        display.chart(
            charts.bars.latency_figure(chosen, lang),
            chosen[["variant", "median_s", "p10_s", "p90_s"]],
            key="lesson-variants",
        )

    # 9. Larger batches ---------------------------------------------------------------------------
    st.header(_("lesson.batch.title"))
    quote("batch")
    st.markdown(_("lesson.batch.body"))
    st.page_link(
        "app_pages/scaling.py", label=_("lesson.batch.link"), icon=":material/trending_up:"
    )

    # 10. Training: where nesting hurts most -------------------------------------------------------
    st.header(_("lesson.train.title"))
    chain = VARIANTS["nested"].chain(pooled_height, time_steps)
    st.markdown(_("lesson.train.body", chain=chain, pooled_height=pooled_height))
    nested_step, folded_step = (measured(name, task="training") for name in ("nested", "folded"))
    nested_forward, folded_forward = measured("nested"), measured("folded")
    pairs = ((nested_step, nested_forward), (folded_step, folded_forward))
    if all(row is not None for pair in pairs for row in pair):
        for column, (step, forward) in zip(st.columns(2), pairs, strict=True):
            column.metric(
                _("lesson.train.metric.step", variant=step["variant"]),
                display.format_ms(step["median_s"]),
                help=_("lesson.train.metric.step.help"),
            )
            column.metric(
                _("lesson.train.metric.ratio", variant=step["variant"]),
                f"{step['median_s'] / forward['median_s']:.2g}×",
            )
            column.metric(
                _("lesson.train.metric.kept", variant=step["variant"]),
                f"{step['kept_activation_bytes'] / 2**20:.3g} MiB",
            )
        st.markdown(
            _(
                "lesson.train.here",
                speedup=nested_step["median_s"] / folded_step["median_s"],
                forward_speedup=nested_forward["median_s"] / folded_forward["median_s"],
            )
        )
        phases = phase_frame(outcome.records)
        display.chart(charts.training.phases_figure(phases, lang), phases, key="lesson-training")
    elif frame is None:
        st.info(_("lesson.train.press", variants=", ".join(TRAINED)), icon=":material/play_arrow:")

    # 11. Three backends: this machine's latest stored comparison ---------------------------------
    st.header(_("lesson.backends.title"))
    state.lead("lesson.backends.body", config)
    numbers = backend_numbers.stored_comparison(caches.result_store())
    if numbers.empty:
        st.info(_("lesson.backends.none"), icon=":material/compare_arrows:")
    else:
        settings = numbers.attrs["settings"]
        st.markdown(
            _(
                "lesson.backends.here",
                host=numbers.attrs["host"],
                created=numbers["created_at"].max()[:16].replace("T", " "),
                batch=settings["batch_size"],
                time=settings["time_steps"],
                precision=settings["precision"],
                task=_("task." + settings["task"]),
                device=numbers.attrs["device"],
            )
        )
        left, right = st.columns([1, 1])
        shown = numbers.assign(median_ms=numbers["median_s"] * 1e3)
        shown = shown[["variant", "backend", "median_ms", "vs_tensorflow"]].copy()
        shown.attrs = {}
        with left:
            display.table(
                shown,
                key="lesson-backends-table",
                column_config={
                    "variant": st.column_config.TextColumn(_("column.variant")),
                    "backend": st.column_config.TextColumn(_("column.backend")),
                    "median_ms": st.column_config.NumberColumn(
                        _("lesson.backends.col.ms"), format="%.3g"
                    ),
                    "vs_tensorflow": st.column_config.NumberColumn(
                        _("lesson.backends.col.ratio"), format="%.2f"
                    ),
                },
            )
        with right:
            figure = charts.bars.timing_figure(numbers, "variant", _("lesson.backends.chart"), lang)
            figure.update_yaxes(
                type="log", dtick="D2"
            )  # the backends differ by orders of magnitude
            display.chart(figure, shown, key="lesson-backends")
