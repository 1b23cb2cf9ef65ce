"""What the Profile page runs: every selected variant on every chosen backend under its profiler,
each summary row stored (`measure.profile_and_store`). A profile's failure is its one line; the
others still run. `gaps` names the sections a backend cannot give."""

from __future__ import annotations

import dataclasses
import tempfile

import pandas as pd

from hierlstm import measure
from hierlstm.app import state
from hierlstm.app.outcomes import kept, settings_of
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig, Timing, data_folder
from hierlstm.profiling.record import ProfileResult, zip_logdir
from hierlstm.refusals import Refused, writable_folder
from hierlstm.timing import RUN_FAILURES, error_line, layer_breakdown
from hierlstm.timing.basics import scaled_progress, share


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
    backend: str = state.IN_PROCESS
    label: str = ""  # the variant, and its backend when the run had several

    @property
    def key(self) -> str:
        """Its widgets' key suffix: the variant, and its backend when it is not TensorFlow."""
        if self.backend == state.IN_PROCESS:
            return self.variant
        return f"{self.variant}-{self.backend}"

    def gaps(self) -> dict[str, str]:
        """What this profile's backend cannot give, by the page's section: section -> the
        message key of its one line (`profile.gap.*`, with the profile's `label`)."""
        found = {}
        if self.backend == "torch":
            found |= {"split": "profile.gap.split.torch", "lines": "profile.gap.lines.torch"}
            found["kernels"] = "profile.gap.kernels.torch"
        elif self.backend != state.IN_PROCESS:
            found["split"] = "profile.gap.split.separate"
        if self.result is not None and self.result.timeline is None:
            found["timeline"] = "profile.gap.timeline"
        elif self.backend == "torch":
            found["timeline"] = "profile.gap.timeline.torch"
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
    here = config.backend == state.IN_PROCESS
    if not here:  # the worker says nothing until its capture is read
        part(0, 1)(0.0, state.text("profile.progress.worker", backend=config.backend))
    result, stored = kept(
        measure.profile_and_store,
        config,
        timing,
        steps=steps,
        logdir=capture_folder(),
        on_progress=part(0, 0.7 if here else 1),
    )
    separate = layer_breakdown(config, timing, on_progress=part(0.7, 1)) if here else None
    archive = zip_logdir(result.logdir)
    return VariantProfile(config.variant, result, separate, archive, stored, backend=config.backend)


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
    settings = {**settings_of(controls), "steps": steps}
    return ProfileOutcome(tuple(profiles), settings)
