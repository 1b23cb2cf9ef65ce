"""The banner on every page: TensorFlow and Keras versions, the device and strategy in use,
whether cuDNN is available (and why not: an NVIDIA GPU TensorFlow cannot use is named, with the
fix, as `doctor` says it), and the warnings a link or the server's start left."""

from __future__ import annotations

import streamlit as st

from hierlstm.app.devices import (
    cached_device_report,
    gpu_problems,
    start_devices,
    unusable_gpu_problems,
)
from hierlstm.app.sidebar import Controls
from hierlstm.app.state import language, text
from hierlstm.config import RunConfig, SettingError
from hierlstm.i18n import MessageError

# TensorFlow is imported by the server's warm-up (`hierlstm.app.server.warmup`); the frame
# imports this module before that, so what needs TensorFlow is imported where it is used.


def cudnn_status() -> str:
    report = cached_device_report()
    unusable = unusable_gpu_problems()
    if not report.gpus and unusable:  # a GPU is there: say so, not "sees no GPU"
        return text("banner.cudnn.unusable", subject=unusable[0].subject(language()))
    if not report.cuda_build:
        return text("banner.cudnn.no_cuda")
    if not report.gpus:
        return text("banner.cudnn.no_gpu")
    return text("banner.cudnn.yes", version=report.cudnn_version or "?", gpus=len(report.gpus))


def strategy_status(config: RunConfig) -> str:
    """The strategy in use, in words: "none (one device)" or "mirrored, 2 replicas × 2"."""
    if config.strategy == "none":
        return text("banner.strategy.none")
    from hierlstm.distributed import distribute
    from hierlstm.timing.failures import first_line

    try:
        run_plan = distribute.plan(config)
    except (SettingError, RuntimeError) as error:
        return text("banner.strategy.invalid", strategy=config.strategy, error=first_line(error))
    return text(
        "banner.strategy.mirrored",
        label=run_plan.label,
        replicas=run_plan.replicas,
        batch=run_plan.per_replica_batch,
    )


def starting_banner() -> None:
    """The banner while the server warms up: what it is waiting for, nothing that needs TF."""
    with st.container(border=True, key="banner"):
        st.markdown(text("banner.starting"))


def banner(controls: Controls, warmup_failed: str = "") -> None:
    """Versions, the device and strategy in use and whether cuDNN is available (and why not),
    on every page; and the server's warm-up if it failed (a bug of ours, in the server's log)."""
    from hierlstm.hardware import resolve_device

    report = cached_device_report()
    config = controls.config
    try:
        device = report.device_label(resolve_device(config.device))
    except SettingError as error:
        device = str(error)
    if config.strategy != "none":
        device = text("banner.device.replicas")
    with st.container(border=True, key="banner"):
        st.markdown(
            text(
                "banner.line",
                tensorflow=report.tensorflow,
                keras=report.keras,
                device=device,
                strategy=strategy_status(config),
                cudnn=cudnn_status(),
            )
        )
    if warmup_failed:
        st.error(text("banner.warmup_failed", error=warmup_failed), icon=":material/error:")
    for key, error in start_devices():  # banner.gpu_memory_failed, banner.devices_failed
        said = error.sentence(language()) if isinstance(error, MessageError) else str(error)
        st.error(text(key, error=said), icon=":material/memory:")
    # The same sentences as `python -m hierlstm doctor`: the first (the most serious) shown, the
    # others one click away, so a GPU server's banner does not push the page out of sight.
    problems = sorted(gpu_problems(), key=lambda problem: problem.severity != "unusable")
    for index, problem in enumerate(problems):
        if index == 1:
            more = st.expander(text("banner.gpu_more", count=len(problems) - 1))
        message = text(
            "banner.gpu_problem", problem=problem.sentence(language()), fix=problem.fix(language())
        )
        place = st if index == 0 else more
        show = place.warning if problem.severity == "unusable" else place.info
        show(message, icon=":material/memory:")
    from hierlstm.app import caches  # it imports the model builders: TensorFlow is there now

    if refusal := caches.store_refusal():  # one line; runs still run, unstored
        st.warning(
            text("refusal.not_kept", why=refusal.sentence(language())), icon=":material/database:"
        )
    for name, value, reason in controls.url_warnings:
        st.warning(
            text("url.rejected", name=name, value=value, reason=reason), icon=":material/link_off:"
        )
