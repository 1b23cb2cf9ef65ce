"""Shape trace: every step a tensor takes through the selected variants, symbolic beside
concrete shapes, the axes as coloured bands, and the builder's source as it runs. Its warm-up
traces the default variants into the cache the page reads."""

import functools
import logging
import time
from collections.abc import Sequence

import streamlit as st

from hierlstm import charts
from hierlstm.app import caches, display, state
from hierlstm.app.state import DEFAULT_VARIANTS
from hierlstm.config import RunConfig
from hierlstm.model import cost, trace_notes
from hierlstm.model.builders import builder_of
from hierlstm.registry import VARIANTS
from hierlstm.timing import failures

_ = state.text
LOG = logging.getLogger("hierlstm.app.server.warmup")


def draw(controls, _inputs) -> None:
    configs = controls.variant_configs
    st.page_link("app_pages/inside.py", label=_("inside.link"), icon=":material/grid_on:")
    # Lazy tabs: only the open one is drawn (switching reruns the page, the traces are cached). A
    # new browser draws one figure and one table, not one per variant, before the page is idle.
    tabs = (
        st.tabs(list(controls.variants), key="trace-tab", on_change="rerun")
        if len(configs) > 1
        else [st.container()]
    )
    for tab, config in zip(tabs, configs, strict=True):
        if getattr(tab, "open", True) is False:  # a plain container (one variant) has no .open
            continue
        with tab:
            title = state.variant_title(config.variant)
            state.lead(VARIANTS[config.variant].explanation_key, config, prefix=f"**{title}** · ")
            if problem := caches.trace_problem(config):
                st.warning(problem, icon=":material/hourglass_top:")
                continue
            start = time.perf_counter()
            try:
                steps = caches.trace(config)
            except failures.RUN_FAILURES as error:  # one variant failing must not hide the others
                st.error(
                    _("trace.failed", variant=config.variant, error=failures.first_line(error))
                )
                continue
            elapsed = time.perf_counter() - start
            top = [step for step in steps if step.depth == 0]
            per_replica = top[0].concrete_shape[0]  # under a strategy the trace is one replica's
            replica = config.replace(batch_size=per_replica)
            if top[0].replicas > 1:
                st.info(
                    _(
                        "trace.replicas",
                        batch=config.batch_size,
                        replicas=top[0].replicas,
                        per=per_replica,
                    ),
                    icon=":material/call_split:",
                )
            columns = st.columns(4)
            columns[0].metric(_("trace.metric.params"), f"{sum(s.params for s in top):,}")
            columns[1].metric(
                _("trace.metric.flops"),
                f"{sum(s.flops for s in top) / 1e9:.3g} GFLOP",
                help=_("trace.metric.flops.help"),
            )
            columns[2].metric(
                _("trace.metric.chain"),
                f"{VARIANTS[config.variant].chain(config.pooled_height, config.time_steps):,}",
                help=_("trace.metric.chain.help"),
            )
            columns[3].metric(
                _("trace.metric.memory"),
                f"{cost.activation_bytes(replica) / 2**20:.3g} MiB",
                help=_("trace.metric.memory.help"),
            )
            flow = caches.figure(
                ("trace-flow", steps, controls.language),
                functools.partial(charts.axis_flow.axis_flow_figure, steps, controls.language),
            )
            flow_data = trace_notes.trace_table(steps, controls.language)
            display.chart(flow, flow_data, key=f"flow-{config.variant}")
            st.caption(_("trace.timing", ms=elapsed * 1e3))
            widths = {_("trace.col.step"): "medium", _("trace.col.note"): "large"}
            display.table(
                flow_data,
                key=f"trace-table-{config.variant}",
                column_config={
                    name: st.column_config.TextColumn(width=w) for name, w in widths.items()
                },
            )
            label = _("trace.source", variant=config.variant)
            if source := display.code_expander(label, key=f"source-{config.variant}"):
                with source:
                    st.caption(_("trace.source.caption"))
                    for name, code in display.related_sources(builder_of(config.variant)):
                        st.markdown(f"`{name}`")
                        st.code(code, language="python")


def _trace(configs: Sequence[RunConfig]) -> None:
    """Each config traced into the page's cache, and the shapes a cold page drew before it
    (`hierlstm.model.shapes`) confirmed against Keras's: a difference is our bug, logged."""
    from hierlstm.model import shapes

    for config in configs:
        steps = caches.trace(config)
        if problem := shapes.disagreement(shapes.predicted_steps(config), steps):
            LOG.error("the predicted shapes of %s are not Keras's: %s", config.variant, problem)


def _default_configs() -> list[RunConfig]:
    return [RunConfig(variant=name) for name in DEFAULT_VARIANTS]


def warm_up() -> None:
    """Every default variant traced."""
    _trace(_default_configs())


def warm_up_open_tab() -> None:
    """The open tab (the first default variant): all a first visitor's page waits for; the
    page draws only the open tab."""
    _trace(_default_configs()[:1])


def warm_up_other_tabs() -> None:
    """The other tabs, once the pages are quiet (a click traces one sooner)."""
    _trace(_default_configs()[1:])
