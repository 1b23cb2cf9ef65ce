"""What if a part of the model were changed: interventions, each a place and an action, applied
where each value is computed, so that every later equation reads what the intervention wrote.
Numpy only: the record (written as the command's words: `command_words`), the interventions
placed on a geometry as masks, the oracle under them, what changed, and the trained head's
prediction. Their command-line syntax, parsed: `whatif_syntax`. The same interventions in
TensorFlow: `whatif_tf`.

A place is an outer time range t and an inner step range s, Python slices (end exclusive,
either end open). An action clamps a gate (i, f, g, o) of the inner or the outer LSTM to a
value, sets a state (c, h) of either to a value, silences a conv channel or a band of the
input's height, or switches the input to another sound. Clamping the outer o to 0 makes every
output 0: h = o · tanh(c)."""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from hierlstm.config import RunConfig
from hierlstm.i18n import MessageError, t
from hierlstm.inside.sounds import SOUNDS, sound_input
from hierlstm.model.params import Params
from hierlstm.model.reference import LAYERS, Edit, reference_layers

LSTMS = ("inner", "outer")
STATES = ("c", "h")
# What a clamp or a set may write: a gate's activation's range (sigmoid, tanh for g), h's
# (o · tanh c), and for c a span far past any state these sequences reach (it grows by at most 1
# a step).
RANGES = {"i": (0.0, 1.0), "f": (0.0, 1.0), "g": (-1.0, 1.0), "o": (0.0, 1.0)}
RANGES |= {"c": (-100.0, 100.0), "h": (-1.0, 1.0)}
VIEWS = ("input", *LAYERS)  # what a run gives, in the order the tensor flows


class WhatIfRefused(MessageError, ValueError):
    """An intervention that cannot be: `key` (`inside.whatif.bad.*`) and its values."""


def _ends(part: slice) -> tuple[int | None, int | None]:
    return part.start, part.stop


def _slice_text(part: slice) -> str:
    start, stop = (str(end) if end is not None else "" for end in _ends(part))
    return f"{start}:{stop}"


@dataclasses.dataclass(frozen=True)
class Place:
    """Where: outer time steps `t` and inner steps `s` (the pooled height), Python slices."""

    t: slice = dataclasses.field(default_factory=lambda: slice(None))
    s: slice = dataclasses.field(default_factory=lambda: slice(None))

    def __hash__(self):  # a slice is hashable from Python 3.12 only
        return hash((_ends(self.t), _ends(self.s)))

    def times(self, time_steps: int) -> np.ndarray:
        """(time_steps,) bool: the outer steps t it covers."""
        return covered(self.t, time_steps)

    def steps(self, rows: int) -> np.ndarray:
        """(rows,) bool: the inner steps s it covers."""
        return covered(self.s, rows)

    @property
    def open_s(self) -> bool:
        return _ends(self.s) == (None, None)


def covered(part: slice, count: int) -> np.ndarray:
    mask = np.zeros(count, bool)
    mask[part] = True
    return mask


@dataclasses.dataclass(frozen=True)
class Clamp:
    """A gate of one LSTM, its activation replaced by `value`."""

    lstm: str
    gate: str
    value: float

    def words(self) -> str:
        return f"--clamp {self.lstm}.{self.gate}={self.value:g}"


@dataclasses.dataclass(frozen=True)
class SetState:
    """A state (c or h) of one LSTM replaced by `value` where it is computed."""

    lstm: str
    state: str
    value: float

    def words(self) -> str:
        return f"--set {self.lstm}.{self.state}={self.value:g}"


@dataclasses.dataclass(frozen=True)
class SilenceChannel:
    """A conv channel's output set to 0 (at the conv rows pooled into the place's s)."""

    channel: int

    def words(self) -> str:
        return f"--silence channel={self.channel}"


@dataclasses.dataclass(frozen=True)
class SilenceHeight:
    """A band of the input's height (frequency bands), a slice, set to 0: silence."""

    height: slice

    def __hash__(self):
        return hash(_ends(self.height))

    def words(self) -> str:
        return f"--silence height={_slice_text(self.height)}"


@dataclasses.dataclass(frozen=True)
class Switch:
    """The input becomes another sound's spectrogram, over the place's t (`--at t=10:`: from
    t = 10 on)."""

    sound: str

    def words(self) -> str:
        return f"--switch {self.sound}"


Action = Clamp | SetState | SilenceChannel | SilenceHeight | Switch
INNER_STEP = (SilenceChannel,)  # besides the inner LSTM's own: the actions an s range places


def has_inner_step(action: Action) -> bool:
    """Whether the place's s range applies: inside the inner LSTM, or a conv channel at the rows
    pooled into those s."""
    return isinstance(action, INNER_STEP) or getattr(action, "lstm", "") == "inner"


@dataclasses.dataclass(frozen=True)
class Intervention:
    """One action at one place."""

    action: Action
    place: Place = dataclasses.field(default_factory=Place)

    def to_dict(self) -> dict:
        fields = dataclasses.asdict(self.action)
        if isinstance(self.action, SilenceHeight):
            fields["height"] = list(_ends(self.action.height))
        kind = type(self.action).__name__
        return {
            "action": re.sub(r"(?<!^)([A-Z])", r"_\1", kind).lower(),  # SetState -> set_state
            **fields,
            "t": list(_ends(self.place.t)),
            "s": list(_ends(self.place.s)),
        }


def command_words(interventions: Sequence[Intervention]) -> str:
    """The command line's flags for interventions that share one place (as the command gives
    them): `--clamp outer.f=0 --at t=10:`."""
    words = [intervention.action.words() for intervention in interventions]
    if interventions:
        place = interventions[0].place
        for axis in ("t", "s"):
            part = getattr(place, axis)
            if _ends(part) != (None, None):
                words.append(f"--at {axis}={_slice_text(part)}")
    return " ".join(words)


# --- placed on a geometry, applied ------------------------------------------------------------

Edits = dict  # {(point, step): [(mask, replacement), ...]}, in the order given


def placed(
    interventions: Sequence[Intervention], config: RunConfig, batch: int, seed: int = 0
) -> Edits:
    """Each intervention as masks where it writes: {(point, step): [(mask, replacement)]}.
    Points and masks: "input" (1, H, T, 1) and "conv" (1, H, T, C) at step None; "inner_f" ...
    at each inner step s, a mask over the folded rows (B*T, 1); "outer_f" ... at each outer
    step t, (1, 1). A replacement is a number, or for a switch the other sound (1, H, T, 1)."""
    time_steps, height = config.time_steps, config.height
    edits: Edits = defaultdict(list)
    for intervention in interventions:
        action, place = intervention.action, intervention.place
        times = place.times(time_steps)
        if isinstance(action, Clamp | SetState):
            name = f"{action.lstm}_{getattr(action, 'gate', None) or action.state}"
            if action.lstm == "outer":
                for step in np.flatnonzero(times):
                    edits[(name, int(step))].append((np.ones((1, 1), bool), action.value))
            else:
                rows = np.tile(times, batch)[:, None]  # (B*T, 1): row b*T + t of the fold
                for step in np.flatnonzero(place.steps(config.pooled_height)):
                    edits[(name, int(step))].append((rows, action.value))
        elif isinstance(action, SilenceChannel):
            rows = _conv_rows(place, config)
            channels = np.arange(config.filters) == action.channel
            mask = rows[None, :, None, None] & times[None, None, :, None]
            edits[("conv", None)].append((mask & channels[None, None, None, :], 0.0))
        elif isinstance(action, SilenceHeight):
            band = covered(action.height, height)
            edits[("input", None)].append(
                (band[None, :, None, None] & times[None, None, :, None], 0.0)
            )
        else:
            other = sound_input(action.sound, height, time_steps, seed)[None, :, :, None]
            edits[("input", None)].append(
                (np.broadcast_to(times[None, None, :, None], other.shape), other)
            )
    return dict(edits)


def _conv_rows(place: Place, config: RunConfig) -> np.ndarray:
    """(H,) bool: the conv rows pooled into the place's s (every row when s is open)."""
    if place.open_s:
        return np.ones(config.height, bool)
    steps = place.steps(config.pooled_height)
    rows = np.zeros(config.height, bool)
    rows[: steps.size * config.pool_height] = np.repeat(steps, config.pool_height)
    return rows


def numpy_edit(edits: Edits) -> Edit:
    """`edits` as the oracle's edit: each mask's cells replaced, every other value untouched."""

    def edit(point, step, value):
        for mask, replacement in edits.get((point, step), ()):
            value = np.where(mask, replacement, value)
        return value

    return edit


def oracle_values(
    params: Params,
    x: np.ndarray,
    interventions: Sequence[Intervention],
    config: RunConfig,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """x (B, H, T, 1) -> every layer's values in float64 under `interventions`, from the
    equations (`reference_layers`), and "input", the input the model read (B, H, T, 1)."""
    edit = numpy_edit(placed(interventions, config, x.shape[0], seed))
    x = edit("input", None, np.asarray(x, np.float64))
    values = reference_layers(params, x, pool_height=config.pool_height, edit=edit)
    return {"input": x, **values}


def first_reach(interventions: Sequence[Intervention], config: RunConfig) -> int | None:
    """The first outer time step the interventions can change (None when there are none): the
    start of their t ranges; an input's (a silence of its height, a switch) one kernel reach
    earlier, since the conv's 'same' padding reads time steps ahead."""
    ahead = config.kernel_size - 1 - (config.kernel_size - 1) // 2
    starts = []
    for intervention in interventions:
        start = int(np.argmax(intervention.place.times(config.time_steps)))
        at_input = isinstance(intervention.action, SilenceHeight | Switch)
        starts.append(max(0, start - ahead) if at_input else start)
    return min(starts, default=None)


# --- what changed -----------------------------------------------------------------------------


def time_axis(view: str) -> int:
    """The outer time axis of a view's values with their batch axis: (B, H, T, C) for the input,
    conv and pooled maps, (B, T, ...) for the rest."""
    return 2 if view in ("input", "conv", "pool") else 1


@dataclasses.dataclass(frozen=True)
class Change:
    """The intervened run against the untouched one, per view (`VIEWS`): the largest absolute
    difference, and the first outer time step t where any value differs (None: none does)."""

    largest: dict[str, float]
    first_time: dict[str, int | None]

    def line(self, lang: str) -> str:
        """What the interventions did to the outputs, in one sentence."""
        first = self.first_time["outer_h"]
        if first is None:
            return t("inside.whatif.unchanged", lang)
        return t("inside.whatif.changed", lang, t=first, change=self.largest["outer_h"])


def change_of(before: Mapping[str, np.ndarray], after: Mapping[str, np.ndarray]) -> Change:
    """The `Change` from `before` to `after`, each {view: values with their batch axis}."""
    largest, first_time = {}, {}
    for view in VIEWS:
        difference = np.abs(after[view] - before[view])
        axis = time_axis(view)
        changed = np.moveaxis(difference, axis, 0).reshape(difference.shape[axis], -1).any(axis=1)
        largest[view] = float(difference.max())
        first_time[view] = int(np.argmax(changed)) if changed.any() else None
    return Change(largest, first_time)


def difference_of(values_a: Mapping, values_b: Mapping) -> float:
    """The largest |a - b| over every view both have: TensorFlow against the oracle."""
    return max(float(np.max(np.abs(values_a[v] - values_b[v]))) for v in VIEWS)


# --- the trained model's prediction -----------------------------------------------------------


def predict(head: Mapping[str, np.ndarray], outer_h: np.ndarray) -> np.ndarray:
    """outer_h (..., T, outer) -> (..., T, sounds): the trained Dense head's probabilities
    (`hierlstm.inside.learner`), softmax of h · kernel + bias."""
    logits = outer_h @ np.asarray(head["kernel"], np.float64) + np.asarray(head["bias"], np.float64)
    logits = logits - logits.max(axis=-1, keepdims=True)
    exponentials = np.exp(logits)
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def playing(
    interventions: Sequence[Intervention], labels: np.ndarray, time_steps: int
) -> np.ndarray:
    """labels (..., T), each the index in SOUNDS of the sound playing, after the switches."""
    labels = np.array(labels)
    for intervention in interventions:
        if isinstance(intervention.action, Switch):
            times = intervention.place.times(time_steps)
            labels[..., times] = SOUNDS.index(intervention.action.sound)
    return labels


# --- the Lesson's forget gate -----------------------------------------------------------------

FORGET_CLAMPS = {"model": None, "zero": 0.0, "one": 1.0}  # the inner f as computed, 0, 1


def summary_memory(params: Params, x: np.ndarray, config: RunConfig) -> dict[str, np.ndarray]:
    """How far back the summary (the inner LSTM's last h) remembers: for each inner step s, the
    largest change of the summary when the input at s is removed (every conv channel silenced at
    the rows pooled into s), with the inner forget gate as the model computes it, clamped to 0
    and clamped to 1 (`FORGET_CLAMPS`): {name: (pooled_height,)}. x (B, H, T, 1)."""
    memory = {}
    for name, value in FORGET_CLAMPS.items():
        clamp = () if value is None else (Intervention(Clamp("inner", "f", value)),)
        before = oracle_values(params, x, clamp, config)["summary"]
        changes = []
        for step in range(config.pooled_height):
            place = Place(s=slice(step, step + 1))
            removed = [Intervention(SilenceChannel(c), place) for c in range(config.filters)]
            after = oracle_values(params, x, (*clamp, *removed), config)["summary"]
            changes.append(float(np.max(np.abs(after - before))))
        memory[name] = np.array(changes)
    return memory
