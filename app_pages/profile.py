"""Profile: the selected variants run under the TensorFlow Profiler, each step's time per layer
(from the ops' name scopes) beside the separate-call split, the top op types, the threads and
streams, a GPU's kernels, and the capture as a .zip for TensorBoard; every profile stored."""

import streamlit as st

from hierlstm.app import caches, display, outcomes, profile_charts, runs, sidebar, state
from hierlstm.config import Timing
from hierlstm.profiling import DEFAULT_STEPS

controls = sidebar.current_controls()
_ = state.text
KEY = "profile"

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
                display.in_ms(result.op_types.head(12)),
                key=f"profile-ops-{profile.variant}",
                column_config={"share": st.column_config.NumberColumn(format="percent")},
            )
        with right:
            st.subheader(_("profile.lines"))
            display.table(display.in_ms(result.lines), key=f"profile-lines-{profile.variant}")
        st.subheader(_("profile.kernels"))
        if result.kernels.empty:
            st.caption(_("profile.kernels.none"))
        else:
            display.table(display.in_ms(result.kernels), key=f"profile-kernels-{profile.variant}")
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
