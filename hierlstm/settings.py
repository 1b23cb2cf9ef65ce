"""Every HIERLSTM_* environment variable, in one table: its default and the parser that reads it,
so a bad value of any of them is refused the same way, one catalogue sentence naming it (the
command line: one `error:` line and exit 2, before TensorFlow; the app: the same sentence in the
page's language). No TensorFlow.

    read("HIERLSTM_MAX_BATCH")   -> 1024, or the environment's whole number; SettingValueError
    check_environment()          every setting read once: the first bad one raises
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping

from hierlstm.config import SettingError
from hierlstm.i18n import MessageError


class SettingValueError(MessageError, SettingError):
    """A HIERLSTM_* variable whose value its parser refuses: catalogue message `key` with
    `values` (the variable's name among them); str() is the English."""


def whole(low: int = 1, high: int | None = None) -> Callable[[str, str], int]:
    """A parser of a whole number from `low` (to `high`)."""

    def parse(name: str, text: str) -> int:
        if text.isdigit() and low <= int(text) and (high is None or int(text) <= high):
            return int(text)
        key = "setting.whole" if high is None else "setting.whole.range"
        raise SettingValueError(key, name=name, value=repr(text), low=low, high=high)

    return parse


def choice(*choices: str) -> Callable[[str, str], str]:
    """A parser of one word of `choices`."""

    def parse(name: str, text: str) -> str:
        if text in choices:
            return text
        raise SettingValueError(
            "setting.choice", name=name, value=repr(text), choices=", ".join(choices)
        )

    parse.choices = choices
    return parse


def path(name: str, text: str) -> str:
    """A file or folder: any text (the code that opens it says what is wrong with it)."""
    return text


@dataclasses.dataclass(frozen=True)
class Setting:
    default: object  # when unset or blank; None: the code that reads it decides
    parse: Callable[[str, str], object]


SETTINGS = {
    "HIERLSTM_MAX_BATCH": Setting(1024, whole()),
    "HIERLSTM_MAX_TIME_STEPS": Setting(2000, whole()),
    "HIERLSTM_MEMORY_BUDGET_MB": Setting(None, whole()),  # unset: from RAM or the GPU's memory
    "HIERLSTM_TRACE_BUDGET_STEPS": Setting(200, whole()),
    "HIERLSTM_CONFIRM_SECONDS": Setting(30, whole()),
    "HIERLSTM_GPU_MEMORY_MB": Setting(None, whole()),  # unset: memory growth
    "HIERLSTM_LOGICAL_CPUS": Setting(None, whole(1, 64)),  # unset: one CPU device
    "HIERLSTM_KEEP_PROFILES": Setting(100, whole()),
    "HIERLSTM_UPLOAD_MB": Setting(20, whole()),
    "HIERLSTM_WARMUP": Setting("full", choice("full", "trace", "off")),
    "HIERLSTM_RUNS": Setting("worker", choice("worker", "here")),  # where a page's run computes
    "HIERLSTM_WARMUP_AFTER": Setting(None, path),
    "HIERLSTM_DB": Setting(None, path),
    "HIERLSTM_LOCK_DIR": Setting(None, path),
    "HIERLSTM_NVIDIA_PROC": Setting("/proc/driver/nvidia", path),
}


def read(name: str, environ: Mapping[str, str] | None = None, error=SettingValueError):
    """`name`'s value parsed, its default when unset or blank. A bad value raises `error` (a
    MessageError class: the caller's own, such as the limits' LimitError, with the same
    catalogue message)."""
    setting = SETTINGS[name]
    text = (os.environ if environ is None else environ).get(name, "").strip()
    if not text:
        return setting.default
    try:
        return setting.parse(name, text)
    except SettingValueError as refused:
        if error is SettingValueError:
            raise
        raise error(refused.key, **refused.values) from None


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Every setting read once: the command line's check before it starts."""
    for name in SETTINGS:
        read(name, environ)
