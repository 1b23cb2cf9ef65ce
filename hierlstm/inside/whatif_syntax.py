"""The what-if command-line syntax, one parser for the command and the page: `--clamp outer.f=0
--set inner.c=0 --silence channel=2 --silence height=:3 --switch tones --at t=10: --at s=1:2`
read into `whatif.Intervention`s on a geometry, every bad word, name, value or range one
`WhatIfRefused` sentence. Written back as words by `whatif.command_words`."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

from hierlstm.config import RunConfig
from hierlstm.inside.sounds import SOUNDS
from hierlstm.inside.whatif import (
    LSTMS,
    RANGES,
    STATES,
    Action,
    Clamp,
    Intervention,
    Place,
    SetState,
    SilenceChannel,
    SilenceHeight,
    Switch,
    WhatIfRefused,
    covered,
    has_inner_step,
)
from hierlstm.model.reference import GATES

FLAGS = ("clamp", "set", "silence", "switch", "at")  # the command's intervention flags
_SLICE = r"\s*(-?\d+)?\s*:\s*(-?\d+)?\s*"


def split_flags(text: str) -> dict[str, list[str]]:
    """The page's line, as the command takes it ("--clamp outer.f=0 --at t=10:"), into
    {flag: [values]} for `parse_interventions`; WhatIfRefused for any other word."""
    try:
        words = shlex.split(text)
    except ValueError:
        raise WhatIfRefused("inside.whatif.bad.word", word=text) from None
    flags: dict[str, list[str]] = {name: [] for name in FLAGS}
    while words:
        word = words.pop(0)
        name, equals, value = word.removeprefix("--").partition("=")
        if not word.startswith("--") or name not in FLAGS or not (equals or words):
            raise WhatIfRefused("inside.whatif.bad.word", word=word)
        flags[name].append(value if equals else words.pop(0))
    return flags


def _slice(text: str, count: int, axis: str, flag: str) -> slice:
    """ "A:B" -> slice(A, B) along `axis` (t, s or height, `count` long): each end within
    -count..count, at least one step covered."""
    match = re.fullmatch(_SLICE, text)
    if not match:
        raise WhatIfRefused(f"inside.whatif.bad.{flag}", text=text)
    ends = [None if end is None else int(end) for end in match.groups()]
    if any(end is not None and not -count <= end <= count for end in ends):
        raise WhatIfRefused(f"inside.whatif.bad.range.{axis}", text=text, count=count)
    part = slice(*ends)
    if not covered(part, count).any():
        raise WhatIfRefused(f"inside.whatif.bad.empty.{axis}", text=text)
    return part


def _value(target: str, text: str) -> float:
    low, high = RANGES[target.split(".")[1]]
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # nan too
        raise WhatIfRefused("inside.whatif.bad.value", target=target, low=low, high=high, text=text)
    return value


def _place(texts: Sequence[str], config: RunConfig) -> Place:
    parts = {}
    for text in texts:
        axis, _equals, span = text.partition("=")
        if axis.strip() not in ("t", "s") or not _equals:
            raise WhatIfRefused("inside.whatif.bad.at", text=text)
        axis = axis.strip()
        if axis in parts:
            raise WhatIfRefused("inside.whatif.bad.twice", axis=axis)
        count = config.time_steps if axis == "t" else config.pooled_height
        parts[axis] = _slice(span, count, axis, "at")
    return Place(**parts)


def _action(flag: str, text: str, config: RunConfig) -> Action:
    if flag == "switch":
        if text not in SOUNDS:
            raise WhatIfRefused("inside.whatif.bad.switch", text=text, sounds=", ".join(SOUNDS))
        return Switch(text)
    if flag == "silence":
        kind, _equals, value = text.partition("=")
        if kind == "channel" and value.isdigit() and int(value) < config.filters:
            return SilenceChannel(int(value))
        if kind == "channel":
            raise WhatIfRefused("inside.whatif.bad.channel", text=value, last=config.filters - 1)
        if kind == "height":
            return SilenceHeight(_slice(value, config.height, "height", "silence"))
        raise WhatIfRefused("inside.whatif.bad.silence", text=text)
    names = GATES if flag == "clamp" else STATES
    match = re.fullmatch(rf"\s*({'|'.join(LSTMS)})\.({'|'.join(names)})\s*=(.*)", text)
    if not match:
        raise WhatIfRefused(f"inside.whatif.bad.{flag}", text=text)
    lstm, name, value = match.groups()
    value = _value(f"{lstm}.{name}", value.strip())
    return Clamp(lstm, name, value) if flag == "clamp" else SetState(lstm, name, value)


def parse_interventions(
    flags: Mapping[str, Sequence[str]], config: RunConfig
) -> tuple[Intervention, ...]:
    """The command's flags ({"clamp": ["outer.f=0"], "at": ["t=10:"], ...}, `FLAGS`) as
    interventions on `config`'s geometry, each at the one place every `--at` gives; a bad name,
    value or range is a WhatIfRefused, one sentence."""
    if len(flags.get("switch", ())) > 1:
        raise WhatIfRefused("inside.whatif.bad.switch_twice")
    place = _place(flags.get("at", ()), config)
    actions = [
        _action(flag, text, config)
        for flag in ("clamp", "set", "silence", "switch")
        for text in flags.get(flag, ())
    ]
    if flags.get("at") and not actions:
        raise WhatIfRefused("inside.whatif.bad.alone")
    for action in actions:
        if not place.open_s and not has_inner_step(action):
            raise WhatIfRefused("inside.whatif.bad.no_step", action=action.words())
    return tuple(Intervention(action, place) for action in actions)


def interventions_from_text(text: str, config: RunConfig) -> tuple[Intervention, ...]:
    """The page's line, parsed as the command parses its flags."""
    return parse_interventions(split_flags(text), config)
