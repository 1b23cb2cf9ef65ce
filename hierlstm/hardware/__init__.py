"""The devices hierlstm runs on: what TensorFlow sees, which precision is fast where, GPU memory set
before the runtime starts, what `nvidia-smi` reports, and why a present GPU is unusable. Only
`devices` imports TensorFlow, so the admission limits read GPU memory without it."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "DeviceReport": "devices",
    "GpuInfo": "devices",
    "cpu_flags": "devices",
    "device_label": "devices",
    "device_report": "devices",
    "device_string": "devices",
    "list_gpus": "devices",
    "precision_supported": "devices",
    "resolve_device": "devices",
    "versions": "devices",
    "MemorySetting": "gpu",
    "configure_memory": "gpu",
    "memory_limit_mb": "gpu",
    "physical_gpu": "gpu",
    "precision_is_fast": "gpu",
    "DriverReport": "nvidia",
    "NvidiaGpu": "nvidia",
    "query_driver": "nvidia",
    "GpuFacts": "gpu_diagnosis",
    "Problem": "gpu_diagnosis",
    "and_cuda_packages": "gpu_diagnosis",
    "diagnose": "gpu_diagnosis",
    "gather_facts": "gpu_diagnosis",
    "missing_packages": "gpu_diagnosis",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
