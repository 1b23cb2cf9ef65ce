"""The command line's flag text read into settings: sizes, timing, backends and what-if values,
each refused as one `error:` line (`UsageError`, exit status 2) with the sentence the rest of
hierlstm gives (`usage`). The grammar that collects the text is `hierlstm.cli.parser`."""

from __future__ import annotations

import contextlib
import re

from hierlstm.config import BOUNDS, SIZE_FIELDS, RunConfig, SettingError, Timing

# Text flags parsed by RunConfig.from_strings, named as its fields.
CONFIG_FLAGS = (*SIZE_FIELDS, "precision", "lstm_kernel", "device", "strategy", "devices")
CONFIG_FLAGS += ("task", "optimizer")

# `learn`'s own flags: a `hierlstm.inside.learning.Learning` field each ("batch": batch_size).
LEARN_FLAGS = {
    "steps": "Adam updates (default 100)",
    "batch": "sequences per update (default 16)",
    "every": "measure both curves every N steps (default 10)",
    "seed": "makes the sounds and the parameters (default 0)",
}
LEARN_TIME_STEPS = 24  # frames per sequence unless --time-steps: seconds on a CPU


class UsageError(Exception):
    """A bad argument: reported as one `error:` line with exit status 2."""


@contextlib.contextmanager
def usage(*errors: type[Exception]):
    """`errors` (SettingError when none are named) raised inside, as a UsageError of the same
    sentence."""
    try:
        yield
    except tuple(errors or (SettingError,)) as error:
        raise UsageError(str(error)) from None


def backends_from_args(args) -> list[str]:
    """The --backend names, each once, in order (default: tensorflow alone); an unknown one,
    or one whose package is not installed (`hierlstm.backends.missing`), is a UsageError."""
    from hierlstm.registry import BACKENDS

    names = list(dict.fromkeys(getattr(args, "backend", None) or ["tensorflow"]))
    for name in names:
        if name not in BACKENDS:
            raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}; got {name!r}.")
    from hierlstm import backends

    for name in names:
        if reason := backends.missing(name):
            raise UsageError(reason)
    return names


def refuse_unsupported(variant: str, backend: str) -> None:
    """A UsageError naming the variant and the backends it has, when `backend` is not one."""
    from hierlstm.registry import BACKEND_RECORDS, VARIANTS, conversion_refusal

    has = VARIANTS[variant].backends if variant in VARIANTS else (backend,)
    if backend not in has and BACKEND_RECORDS[backend].exported:
        raise UsageError(conversion_refusal(variant))
    if backend not in has:
        raise UsageError(
            f"variant {variant} runs on {', '.join(has)} only, not on --backend {backend} "
            "(it calls TensorFlow itself); choose another variant or backend."
        )


def config_from_args(args, **defaults):
    """A RunConfig from the parsed flags (text, validated with RunConfig's messages)."""
    text = {
        name: getattr(args, name)
        for name in (*CONFIG_FLAGS, "variant")
        if getattr(args, name, None) is not None
    }
    with usage():
        return RunConfig.from_strings(text, **defaults)


def inside_settings(args):
    """(RunConfig, Learning) of `learn`'s flags, checked before TensorFlow is imported."""
    from hierlstm.inside.learning import Learning

    config = config_from_args(args, time_steps=LEARN_TIME_STEPS)
    fields = {"batch": "batch_size"}
    values = {
        fields.get(flag, flag): whole_number(f"--{flag}", getattr(args, flag), 0, 2**31 - 1)
        for flag in LEARN_FLAGS
        if getattr(args, flag) is not None
    }
    with usage():
        return config, Learning(**values)


def whole_number(flag: str, text: str, low: int = 0, high: int = 10**6) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise UsageError(f"{flag} must be a whole number from {low} to {high}; got {text!r}.")
    return int(text)


def seed_number(text: str) -> int:
    return whole_number("--seed", text, *BOUNDS["seed"])


def timing_from_args(args) -> Timing:
    """The Timing of `--warmup`, `--repeats` and `--seed` (defaults: `DEFAULT_TIMING`)."""
    return Timing(
        warmup=whole_number("--warmup", args.warmup, *BOUNDS["warmup"]),
        repeats=whole_number("--repeats", args.repeats, *BOUNDS["repeats"]),
        seed=seed_number(args.seed),
    )


def value_list(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() for part in parts):
        raise UsageError(
            f"--values must be comma-separated whole numbers, e.g. 25,50,100; got {text!r}."
        )
    return [int(part) for part in parts]


def shard_of(text: str) -> tuple[int, int]:
    """ "I/N" -> (I, N). Shard I takes values I, I+N, I+2N, ...: disjoint shards whose union is
    every value, each spread over the whole range (so no shard gets all the slow points)."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
    if not match or not int(match.group(1)) < int(match.group(2)):
        raise UsageError(f"--shard must be I/N with 0 <= I < N; got {text!r}.")
    return int(match.group(1)), int(match.group(2))
