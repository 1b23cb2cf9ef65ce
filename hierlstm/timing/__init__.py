"""How long a run takes: the harness (first call apart, warm-up, device-synchronised samples,
interleaved rounds), training phases, memory probes, the per-layer split and sweeps. It returns
records (`hierlstm.records`); it never stores, prints or imports Streamlit."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "PreparedRun": "calls",
    "Progress": "basics",
    "lstm_kernel": "calls",
    "make_inputs": "basics",
    "no_progress": "basics",
    "scaled_progress": "basics",
    "timed_call": "calls",
    "benchmark": "harness",
    "compare": "harness",
    "make_forward": "harness",
    "prepare": "harness",
    "make_result": "summary",
    "TrainingRun": "training",
    "prepare_training": "training",
    "replica_sweep": "sweeps",
    "scaling": "sweeps",
    "sweep": "sweeps",
    "layer_breakdown": "breakdown",
    "RUN_FAILURES": "failures",
    "error_line": "failures",
    "failed_result": "failures",
    "memory_probe": "memory",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
