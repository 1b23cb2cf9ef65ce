"""Profile: every selected variant on every chosen backend under that backend's profiler
(TensorFlow's in this process, JAX's and torch's in their workers), each step's time per layer
(from the ops' name scopes) beside TensorFlow's separate-call split, one step in time (and as a
Chrome trace), a training step's memory by part beside its measured peak, the top op types,
the threads and streams, a GPU's kernels, and the capture as a .zip; every profile stored.
What a backend's profiler cannot give is one line per profile where it would be."""

import json

import streamlit as st

from hierlstm import charts
from hierlstm.app import caches, display, outcomes, profile_runs, runs, sidebar, state
from hierlstm.config import Timing
from hierlstm.i18n import MESSAGES
from hierlstm.profiling import DEFAULT_STEPS, chrome_trace

controls = sidebar.current_controls()
_ = state.text
KEY = "profile"


def gap_lines(profiles, section: str) -> None:
    """What `section` lacks, and why: one line per reason, naming each profile it holds for."""
    reasons: dict[tuple[str, str], list[str]] = {}
    for profile in profiles:
        if key := profile.gaps().get(section):
            reasons.setdefault((key, profile.backend), []).append(profile.label)
    for (key, backend), labels in reasons.items():
        st.caption(_(key, label=", ".join(labels), backend=backend))


def suffixed(key: str, backend: str) -> str:
    """`key`.jax or `key`.torch, the backend's own wording, where the catalogue has one."""
    return f"{key}.{backend}" if f"{key}.{backend}" in MESSAGES else key


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
        on_change=state.APPLIED_ON_RUN,
    )
)

configs = profile_runs.profiled_configs(controls)
if controls.run and configs:
    timing = controls.timing
    # For the estimate: each profile is about a benchmark with `steps` more calls, and a
    # TensorFlow profile's separate-call split about one more.
    estimated = Timing(timing.warmup, timing.repeats + steps, timing.seed)
    split = [config for config in configs if config.backend == state.IN_PROCESS]
    runs.start_run(
        KEY,
        lambda progress: profile_runs.run_profiles(controls, steps, progress),
        configs,
        runs.Workload((*configs, *split), estimated),
    )
names = ", ".join(state.label(config, controls.several_backends) for config in configs)
config = controls.config
press_run = _("profile.press_run", variants=names, batch=config.batch_size, time=config.time_steps)
settings = {**outcomes.settings_of(controls), "steps": steps}
outcome = runs.shown_result(KEY, press_run, settings, stop=True)
lang = controls.language
done = [profile for profile in outcome.profiles if profile.result is not None]
for profile in outcome.profiles:
    if profile.result is None:
        display.error(_("profile.failed", variant=profile.label, error=profile.error))
if not done:
    st.stop()

width = min(3, len(done))  # at most three metrics a row
for first in range(0, len(done), width):
    for column, profile in zip(st.columns(width), done[first : first + width], strict=False):
        result = profile.result
        column.metric(
            _("profile.metric.step", variant=profile.label),
            display.format_ms(result.profiled_step_s),
            _("profile.metric.harness", ms=result.harness_median_s * 1e3),
            delta_color="off",
            delta_arrow="off",
            help=_("profile.metric.step.help", steps=result.steps, repeats=result.harness_repeats),
        )

splits = {
    profile.label: charts.profile.split_frame(profile.result.layers, profile.separate)
    for profile in done
}
backends = {profile.label: profile.backend for profile in done}
if any(not frame.empty for frame in splits.values()):  # torch's profiles alone have none
    display.chart(
        charts.profile.layer_split_figure(splits, lang, backends),
        charts.profile.split_frames(splits),
        "profile-layers",
        _("profile.layers.caption"),
    )
gap_lines(done, "split")

st.subheader(_("profile.timeline"))
timelines = {p.label: p.result.timeline for p in done if p.result.timeline is not None}
colors = charts.profile.layer_colors(splits.values())
if timelines:
    display.chart(
        charts.profile.timeline_figure(timelines, colors, lang),
        charts.profile.timeline_frame(timelines),
        "profile-timeline",
        _("profile.timeline.caption"),
    )
    if not charts.profile.shares_time_axis(timelines):
        st.caption(_("profile.timeline.own_axes", ratio=charts.profile.SHARED_AXIS_RATIO))
    if any(len(tl.events) > charts.profile.MAX_TIMELINE_BARS for tl in timelines.values()):
        st.caption(_("profile.timeline.capped", cap=charts.profile.MAX_TIMELINE_BARS))
gap_lines(done, "timeline")
if timelines:
    trace = lambda: json.dumps(chrome_trace(timelines))  # noqa: E731 (made only when clicked)
    display.download(
        _("profile.timeline.download"), trace, "hierlstm-step-trace.json", "profile-trace-json"
    )

st.subheader(_("profile.memory"))
memory = charts.profile.memory_frame(
    [profile.result for profile in done], [profile.label for profile in done]
)
if memory.empty:
    st.info(_("profile.memory.inference"), icon=":material/memory:")
else:
    memory_figure = charts.profile.memory_figure(memory, lang)
    display.chart(memory_figure, memory, "profile-memory", _("profile.memory.caption"))
    kinds = set(memory.loc[memory["source"] == "measured", "part"])
    repeats = done[0].result.harness_repeats
    if "gpu_allocator_peak" in kinds:
        st.caption(_("profile.memory.gpu", repeats=repeats))
    if "cpu_rss_growth" in kinds:
        st.info(_("profile.memory.cpu", repeats=repeats), icon=":material/info:")
    gap_lines([p for p in done if p.result.config.task == "training"], "memory")

tabs = st.tabs([profile.label for profile in done])
for tab, profile in zip(tabs, done, strict=True):
    result, backend = profile.result, profile.backend
    with tab:
        st.markdown(
            _(
                suffixed("profile.summary", backend),
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
                display.named(display.in_ms(result.op_types.head(12)), "profile.column."),
                key=f"profile-ops-{profile.key}",
                column_config={
                    _("profile.column.share"): st.column_config.NumberColumn(format="percent")
                },
            )
        with right:
            st.subheader(_("profile.lines"))
            if result.lines.empty:
                gap_lines([profile], "lines")
            else:
                lines = display.named(display.in_ms(result.lines), "profile.column.")
                display.table(lines, key=f"profile-lines-{profile.key}")
        st.subheader(_("profile.kernels"))
        if "kernels" in profile.gaps():
            gap_lines([profile], "kernels")
        elif result.kernels.empty:
            st.caption(_("profile.kernels.none"))
        else:
            kernels = display.named(display.in_ms(result.kernels), "profile.column.")
            display.table(kernels, key=f"profile-kernels-{profile.key}")
        display.download(
            _(suffixed("profile.download", backend), variant=profile.label),
            profile.archive,
            f"hierlstm-profile-{profile.key}.zip",
            f"profile-zip-{profile.key}",
        )
        st.caption(_(suffixed("profile.open", backend), logdir=result.logdir))
stored = sum(profile.stored_id is not None for profile in done)
st.caption(_("profile.stored", count=stored, path=str(caches.store_path())))
