"""The devices this server's TensorFlow sees, cached once per server process: the device
report behind the banner, the diagnosis of NVIDIA GPUs TensorFlow cannot use, the Device and
Replicas choices, and what app.py sets before TensorFlow's runtime starts (GPU memory growth or
the HIERLSTM_GPU_MEMORY_MB limit, the logical-CPU split)."""

from __future__ import annotations

import streamlit as st

from hierlstm.config import SettingError

# Every function here needs TensorFlow (imported by the server's warm-up,
# `hierlstm.app.server.warmup`), so each imports what it uses: the frame imports this module
# before TensorFlow is there.


def device_options() -> list[str]:
    return ["auto", "cpu", *(f"gpu:{gpu.index}" for gpu in cached_device_report().gpus)]


@st.cache_resource(max_entries=1, show_spinner=False)
def visible_devices() -> list[str]:
    """Every device this server's TensorFlow sees, as replica names: "cpu:0", "cpu:1" (logical
    CPU devices, HIERLSTM_LOGICAL_CPUS), "gpu:0", ..."""
    from hierlstm.distributed import local_devices

    return [
        f"{kind.lower()}:{index}"
        for kind in ("CPU", "GPU")
        for index in range(len(local_devices(kind)))
    ]


@st.cache_resource(max_entries=1, show_spinner=False)
def start_devices() -> tuple[tuple[str, Exception], ...]:
    """Once, before TensorFlow's runtime starts (app.py calls this first): GPU memory growth,
    or HIERLSTM_GPU_MEMORY_MB per GPU, so several sessions, servers and the CLI share a GPU;
    then the CPU split into HIERLSTM_LOGICAL_CPUS logical devices. What went wrong, as
    (catalogue key, error) pairs for the banner; () when all is set."""
    from hierlstm.distributed import ensure_logical_cpus_from_environment
    from hierlstm.hardware import configure_memory

    problems = []
    for start, key in (
        (configure_memory, "banner.gpu_memory_failed"),
        (ensure_logical_cpus_from_environment, "banner.devices_failed"),
    ):
        try:
            start()
        except (ValueError, RuntimeError) as error:
            problems.append((key, error))  # the banner says it in the page's language
    return tuple(problems)


# --- banner -------------------------------------------------------------------------------


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_device_report():
    from hierlstm.hardware import device_report

    return device_report()


@st.cache_resource(max_entries=1, show_spinner=False)
def gpu_problems() -> tuple:
    """What stops TensorFlow from using this machine's NVIDIA GPUs (`gpu_diagnosis.Problem`s;
    nvidia-smi is asked when the server first renders a page), for the banner and the sidebar."""
    from hierlstm.hardware import diagnose, gather_facts

    return diagnose(gather_facts(cached_device_report()))


def unusable_gpu_problems() -> tuple:
    return tuple(problem for problem in gpu_problems() if problem.severity == "unusable")


def device_name(device: str) -> str:
    """ "CPU (x86_64, 2 cores)" for a stored device string such as "/CPU:0 (x86_64, 2 cores)"."""
    try:
        return cached_device_report().device_label(device.split(" ")[0])
    except SettingError:  # a GPU this machine does not have (an imported result)
        return device
