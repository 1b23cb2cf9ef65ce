"""Whether a run may start, and when: every bound on one run's work with its memory estimate
(`limits`, plain Python), the calibrated long-run estimate (`estimate`), and the machine-wide
lock of a device that timing runs queue on (`runlock`)."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "LimitError": "limits",
    "Limits": "limits",
    "check_limits": "limits",
    "check_trace_budget": "limits",
    "current_limits": "limits",
    "limit_setting": "limits",
    "max_sizes": "limits",
    "memory_estimate_bytes": "limits",
    "StepCost": "estimate",
    "calibrate": "estimate",
    "seconds_left": "estimate",
    "Holder": "runlock",
    "device_keys": "runlock",
    "file_holder": "runlock",
    "hold": "runlock",
    "is_free": "runlock",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
