"""The devices this server's TensorFlow sees, cached once per server process: the device
report behind the banner, the Device and Replicas choices, and the logical-CPU split that
app.py makes before TensorFlow's runtime starts."""

from __future__ import annotations

import streamlit as st

from hierlstm.config import SettingError
from hierlstm.timing.devices import device_report


def device_options() -> list[str]:
    return ["auto", "cpu", *(f"gpu:{gpu.index}" for gpu in cached_device_report().gpus)]


@st.cache_resource(max_entries=1, show_spinner=False)
def visible_devices() -> list[str]:
    """Every device this server's TensorFlow sees, as replica names: "cpu:0", "cpu:1" (logical
    CPU devices, HIERLSTM_LOGICAL_CPUS), "gpu:0", ..."""
    from hierlstm.timing.cluster import local_devices

    return [
        f"{kind.lower()}:{index}"
        for kind in ("CPU", "GPU")
        for index in range(len(local_devices(kind)))
    ]


@st.cache_resource(max_entries=1, show_spinner=False)
def start_devices() -> str:
    """Splits the CPU into HIERLSTM_LOGICAL_CPUS logical devices, once, before TensorFlow's
    runtime starts (app.py calls this first); "" or why it could not."""
    from hierlstm.timing.cluster import ensure_logical_cpus_from_environment

    try:
        ensure_logical_cpus_from_environment()
    except (ValueError, RuntimeError) as error:
        return str(error)
    return ""


# --- banner -------------------------------------------------------------------------------


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_device_report():
    return device_report()


def device_name(device: str) -> str:
    """ "CPU (x86_64, 2 cores)" for a stored device string such as "/CPU:0 (x86_64, 2 cores)"."""
    try:
        return cached_device_report().device_label(device.split(" ")[0])
    except SettingError:  # a GPU this machine does not have (an imported result)
        return device
