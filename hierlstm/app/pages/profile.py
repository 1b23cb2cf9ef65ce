"""Profile: every selected variant on every chosen backend under that backend's profiler
(TensorFlow's in this process, JAX's and torch's in their workers), each step's time per layer
(from the ops' name scopes) beside TensorFlow's separate-call split, one step in time (and as a
Chrome trace), a training step's memory by part beside its measured peak, the top op types,
the threads and streams, a GPU's kernels, and the capture as a .zip; every profile stored
(`measure.profile_and_store`). A profile's failure is its one line; the others still run. What a
backend's profiler cannot give is one line per profile where it would be (`VariantProfile.gaps`)."""

from __future__ import annotations

import dataclasses
import functools
import json
import tempfile

import pandas as pd
import streamlit as st

from hierlstm import charts, measure
from hierlstm.app import caches, display, outcomes, runs, state
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig, Timing, data_folder
from hierlstm.profiling import DEFAULT_STEPS, chrome_trace
from hierlstm.profiling.record import ProfileResult, suffixed, zip_logdir
from hierlstm.refusals import Refused, writable_folder
from hierlstm.registry import BACKEND_RECORDS
from hierlstm.timing import RUN_FAILURES, error_line, layer_breakdown
from hierlstm.timing.basics import scaled_progress, share

_ = state.text
KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)


def inputs(controls) -> int:
    """The steps profiled."""
    low, high = state.limits_of("profile_steps")
    return int(
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


def plan(controls, steps: int) -> runs.Plan | None:
    configs = profiled_configs(controls)
    if not configs:
        return None
    timing = controls.timing
    # For the estimate: each profile is about a benchmark with `steps` more calls, and a
    # TensorFlow profile's separate-call split about one more.
    estimated = Timing(timing.warmup, timing.repeats + steps, timing.seed)
    split = [config for config in configs if state.runs_here(config)]
    return runs.Plan(
        tuple(configs),
        functools.partial(run_profiles, controls, steps),
        runs.Workload((*configs, *split), estimated),
    )


@dataclasses.dataclass(frozen=True)
class VariantProfile:
    """One profile on the Profile page, of a variant on a backend: its profile (or why it
    failed), the separate-call split of the same layers (TensorFlow's; None on JAX and torch),
    the capture as a .zip, the stored row's id, and its name in the page (`state.label`)."""

    variant: str
    result: ProfileResult | None
    separate: pd.DataFrame | None
    archive: bytes
    stored_id: str | None
    error: str = ""
    backend: str = state.DEFAULT_BACKENDS[0]
    label: str = ""  # the variant, and its backend when the run had several

    @property
    def key(self) -> str:
        """Its widgets' key suffix: the variant, and its backend when it runs in a worker."""
        if BACKEND_RECORDS[self.backend].in_process:
            return self.variant
        return f"{self.variant}-{self.backend}"

    def gaps(self) -> dict[str, str]:
        """What this profile's backend cannot give, by the page's section: section -> the
        message key of its one line (`profile.gap.*`, with the profile's `label`): its registry
        record's `profile_gaps`, and what this profile lacks."""
        found = dict(BACKEND_RECORDS[self.backend].profile_gaps)
        if self.result is not None and self.result.timeline is None:
            found["timeline"] = "profile.gap.timeline"
        if self.result is not None and not self.result.peak_memory_kind:
            found["memory"] = "profile.gap.memory"
        return found


def capture_folder() -> str | None:
    """Where a profile's capture goes: the default folder (None) when the data folder takes
    files, else a new temporary folder, so a profile still runs and shows (the banner says
    that results are not kept, and why)."""
    try:
        writable_folder("profile", data_folder() / "profiles")
    except Refused:
        return tempfile.mkdtemp(prefix="hierlstm-profile-")
    return None


def profiled_configs(controls: Controls) -> list[RunConfig]:
    """The configs the Profile page profiles: every selected variant on every chosen backend
    (TensorFlow's profiler runs in this process, JAX's and torch's in their workers)."""
    return list(controls.configs)


@dataclasses.dataclass(frozen=True)
class ProfileOutcome:
    profiles: tuple[VariantProfile, ...]
    settings: dict  # `settings_of` the controls it ran with, and the steps


def _profile(config: RunConfig, timing: Timing, steps: int, part) -> VariantProfile:
    """`config` profiled (`measure.profile_and_store`), then, on TensorFlow, its layers timed as
    separate calls on the same settings (the split JAX and torch cannot give)."""
    here = state.runs_here(config)
    if not here:  # the worker says nothing until its capture is read
        part(0, 1)(0.0, state.text("profile.progress.worker", backend=config.backend))
    stored = outcomes.stored_run(
        measure.profile_and_store,
        config,
        timing,
        steps=steps,
        logdir=capture_folder(),
        on_progress=part(0, 0.7 if here else 1),
    )
    result = stored.value
    separate = layer_breakdown(config, timing, on_progress=part(0.7, 1)) if here else None
    archive = zip_logdir(result.logdir)
    return VariantProfile(
        config.variant, result, separate, archive, stored.first_id, backend=config.backend
    )


def run_profiles(controls: Controls, steps: int, progress: Progress) -> ProfileOutcome:
    """Each selected config (variant x backend) profiled for `steps` steps, its summary row
    stored: TensorFlow's in this process, then its layers timed as separate calls on the same
    settings; JAX's and torch's in their workers. A profile's failure is its one line, the
    others still run."""
    from hierlstm.backends.pool import RunFailed

    profiles = []
    configs = profiled_configs(controls)
    count, several = len(configs), len({config.backend for config in configs}) > 1
    for index, config in enumerate(configs):
        label = state.label(config, several)

        own = share(progress, index, count, f"{label}: ")

        def part(start, end, own=own):
            return scaled_progress(own, start, end)

        try:
            found = _profile(config, controls.timing, steps, part)
        except RUN_FAILURES as error:
            found = VariantProfile(config.variant, None, None, b"", None, error_line(error))
        except RunFailed as error:
            found = VariantProfile(config.variant, None, None, b"", None, error.result.error)
        profiles.append(dataclasses.replace(found, backend=config.backend, label=label))
    settings = {**outcomes.settings_of(controls), "steps": steps}
    return ProfileOutcome(tuple(profiles), settings)


def gap_lines(profiles, section: str) -> None:
    """What `section` lacks, and why: one line per reason, naming each profile it holds for."""
    reasons: dict[tuple[str, str], list[str]] = {}
    for profile in profiles:
        if key := profile.gaps().get(section):
            reasons.setdefault((key, profile.backend), []).append(profile.label)
    for (key, backend), labels in reasons.items():
        st.caption(_(key, label=", ".join(labels), backend=backend))


def draw(controls, steps: int) -> None:
    configs = profiled_configs(controls)
    names = ", ".join(state.label(config, controls.several_backends) for config in configs)
    config = controls.config
    press_run = _(
        "profile.press_run", variants=names, batch=config.batch_size, time=config.time_steps
    )
    settings = {**outcomes.settings_of(controls), "steps": steps}
    outcome = runs.shown_result(KEY, press_run, settings, stop=True)
    lang = controls.language
    done = [profile for profile in outcome.profiles if profile.result is not None]
    for profile in outcome.profiles:
        if profile.result is None:
            display.error(_("profile.failed", variant=profile.label, error=profile.error))
    if not done:
        return

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
                help=_(
                    "profile.metric.step.help", steps=result.steps, repeats=result.harness_repeats
                ),
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
            st.markdown(result.summary(lang))
            left, right = st.columns(2)
            with left:
                st.subheader(_("profile.ops"))
                display.table(
                    result.op_table(lang),
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
                    lines = result.line_table(lang)
                    display.table(lines, key=f"profile-lines-{profile.key}")
            st.subheader(_("profile.kernels"))
            if "kernels" in profile.gaps():
                gap_lines([profile], "kernels")
            elif result.kernels.empty:
                st.caption(_("profile.kernels.none"))
            else:
                kernels = result.device_kernel_table(lang)
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
