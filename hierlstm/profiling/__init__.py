"""The TensorFlow Profiler around a few steps of a prepared run (`profile`), and its XSpace capture
read into time per op, layer and device stream (`xspace`) and one step in time (`timeline`)."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "DEFAULT_STEPS": "profiler",
    "ProfileResult": "record",
    "check_profile": "profiler",
    "default_logdir": "record",
    "new_capture_folder": "record",
    "kept_profiles": "record",
    "profile": "profiler",
    "prune_profiles": "record",
    "zip_logdir": "record",
    "memory_estimate": "record",
    "chrome_trace": "timeline",
    "OUTSIDE": "record",
    "SpaceSummary": "xspace",
    "find_xplane": "xspace",
    "read_xspace": "xspace",
    "summarise": "xspace",
    "StepTimeline": "timeline",
    "step_timeline": "timeline",
    "torch_step_timeline": "timeline",
    "UNATTRIBUTED": "timeline",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
