"""Profile: the selected variants run under the TensorFlow Profiler, each step's time per layer
(from the ops' name scopes) beside the separate-call split, one step in time (and as a Chrome
trace), a training step's memory by part beside its measured peak, the top op types, the
threads and streams, a GPU's kernels, and the capture as a .zip for TensorBoard; every profile
stored."""

import json

import streamlit as st

from hierlstm.app import caches, display, outcomes, profile_charts, runs, sidebar, state
from hierlstm.config import Timing
from hierlstm.profiling import DEFAULT_STEPS, chrome_trace

controls = sidebar.current_controls()
_ = state.text
KEY = "profile"


def headers(frame):
    """A table with its column names in the session's language."""
    return frame.rename(columns=lambda name: _(f"profile.column.{name}"))


low, high = state.limits_of("profile_steps")
steps = int(
    st.number_input(
        _("profile.steps"),
        low,
        high,
        value=DEFAULT_STEPS,
        step=1,
        key="profile_steps",
        help=_("profile.steps.help"),
    )
)

configs = outcomes.profiled_configs(controls)
if elsewhere := sorted({c.backend for c in controls.configs} - {c.backend for c in configs}):
    st.caption(_("control.backends.profile_cli", backends=", ".join(elsewhere)))
if controls.run and configs:
    if problem := runs.run_problem(configs):
        st.error(problem, icon=":material/block:")
    else:
        timing = controls.timing
        # For the estimate: each profile is about a benchmark with `steps` more calls, and its
        # separate-call split about one more.
        estimated = Timing(timing.warmup, timing.repeats + steps, timing.seed)
        runs.start_run(
            KEY,
            lambda progress: outcomes.run_profiles(controls, steps, progress),
            configs,
            runs.Workload((*configs, *configs), estimated),
        )
runs.show_run_outcome(KEY)

outcome = runs.slot(KEY).result
if outcome is None:
    st.info(
        _(
            "profile.press_run",
            variants=", ".join(controls.variants),
            steps=steps,
            batch=controls.config.batch_size,
            time=controls.config.time_steps,
        ),
        icon=":material/play_arrow:",
    )
    st.stop()

if outcome.settings != {**outcomes.settings_of(controls), "steps": steps}:
    st.info(_("bench.stale"), icon=":material/history:")
lang = controls.language
done = [profile for profile in outcome.profiles if profile.result is not None]
for profile in outcome.profiles:
    if profile.result is None:
        st.error(
            _("profile.failed", variant=profile.variant, error=profile.error),
            icon=":material/error:",
        )
if not done:
    st.stop()

columns = st.columns(len(done))
for column, profile in zip(columns, done, strict=True):
    result = profile.result
    column.metric(
        _("profile.metric.step", variant=profile.variant),
        display.format_ms(result.profiled_step_s),
        _("profile.metric.harness", ms=result.harness_median_s * 1e3),
        delta_color="off",
        delta_arrow="off",
        help=_("profile.metric.step.help", steps=result.steps, repeats=result.harness_repeats),
    )

splits = {
    profile.variant: profile_charts.split_frame(profile.result.layers, profile.separate)
    for profile in done
}
display.chart(
    profile_charts.layer_split_figure(splits, lang),
    profile_charts.split_frames(splits),
    key="profile-layers",
)
st.caption(_("profile.layers.caption"))

st.subheader(_("profile.timeline"))
timelines = {profile.variant: profile.result.timeline for profile in done}
colors = profile_charts.layer_colors(splits.values())
display.chart(
    profile_charts.timeline_figure(timelines, colors, lang),
    profile_charts.timeline_frame(timelines),
    key="profile-timeline",
)
st.caption(_("profile.timeline.caption"))
if any(len(timeline.events) > profile_charts.MAX_TIMELINE_BARS for timeline in timelines.values()):
    st.caption(_("profile.timeline.capped", cap=profile_charts.MAX_TIMELINE_BARS))
st.download_button(
    _("profile.timeline.download"),
    lambda: json.dumps(chrome_trace(timelines)),  # made only when clicked
    file_name="hierlstm-step-trace.json",
    mime="application/json",
    key="profile-trace-json",
    icon=":material/download:",
    on_click="ignore",
)

st.subheader(_("profile.memory"))
memory = profile_charts.memory_frame(profile.result for profile in done)
if memory.empty:
    st.info(_("profile.memory.inference"), icon=":material/memory:")
else:
    display.chart(profile_charts.memory_figure(memory, lang), memory, key="profile-memory")
    st.caption(_("profile.memory.caption"))
    kinds = set(memory.loc[memory["source"] == "measured", "part"])
    repeats = done[0].result.harness_repeats
    if "gpu_allocator_peak" in kinds:
        st.caption(_("profile.memory.gpu", repeats=repeats))
    if "cpu_rss_growth" in kinds:
        st.info(_("profile.memory.cpu", repeats=repeats), icon=":material/info:")

tabs = st.tabs([profile.variant for profile in done])
for tab, profile in zip(tabs, done, strict=True):
    result = profile.result
    with tab:
        st.markdown(
            _(
                "profile.summary",
                op=result.op_s * 1e3,
                share=result.op_s / result.profiled_step_s,
                outside=result.outside_s * 1e3,
                device=result.device,
            )
        )
        left, right = st.columns(2)
        with left:
            st.subheader(_("profile.ops"))
            display.table(
                headers(display.in_ms(result.op_types.head(12))),
                key=f"profile-ops-{profile.variant}",
                column_config={
                    _("profile.column.share"): st.column_config.NumberColumn(format="percent")
                },
            )
        with right:
            st.subheader(_("profile.lines"))
            lines = headers(display.in_ms(result.lines))
            display.table(lines, key=f"profile-lines-{profile.variant}")
        st.subheader(_("profile.kernels"))
        if result.kernels.empty:
            st.caption(_("profile.kernels.none"))
        else:
            kernels = headers(display.in_ms(result.kernels))
            display.table(kernels, key=f"profile-kernels-{profile.variant}")
        st.download_button(
            _("profile.download", variant=profile.variant),
            profile.archive,
            file_name=f"hierlstm-profile-{profile.variant}.zip",
            mime="application/zip",
            key=f"profile-zip-{profile.variant}",
            icon=":material/download:",
            on_click="ignore",
        )
        st.caption(_("profile.open", logdir=result.logdir))
stored = sum(profile.stored_id is not None for profile in done)
st.caption(_("profile.stored", count=stored, path=str(caches.store_path())))
