"""One config prepared, timed and checked inside this process's Keras backend, for the worker
processes (`hierlstm.backends.worker`). `prepare` is the backend's runner's (the harness's on
TensorFlow, `backends.compile.keras_run` on JAX and PyTorch); a config for another backend is
refused in one sentence.

    run = prepare(config, seed=0)     built, placed, compiled and first-called
    run.sample()                      {"step": seconds} (+ a training run's phases)
    check(config)                     both oracles for every variant, as JSON-able data
"""

from __future__ import annotations

import keras

from hierlstm.backends import runner, runtime_refusal
from hierlstm.backends.compile import BackendRun, placement  # re-exported: a run's record
from hierlstm.config import RunConfig, SettingError
from hierlstm.model.builders import backend_refusal
from hierlstm.model.check import check_variants
from hierlstm.model.gradcheck import check_gradients
from hierlstm.registry import BACKEND_RECORDS
from hierlstm.timing.basics import Progress, no_progress

__all__ = ["BackendRun", "check", "placement", "prepare"]


def _refusal(config: RunConfig, backend: str) -> str:
    """One sentence when this backend cannot run `config`, else "" (its registry record says
    what it supports)."""
    record = BACKEND_RECORDS[backend]
    if config.backend != backend:
        return f"backend {config.backend} was asked for; this process's backend is {backend}."
    if message := backend_refusal(config.variant, backend) or runtime_refusal(config):
        return message
    if config.strategy != "none" and not record.strategies:
        return f"strategy {config.strategy} is TensorFlow's; the {backend} backend runs none."
    if config.xla and not record.xla:
        compile_note = (
            " (torch.compile is not offered: its first call takes over a minute on a CPU, and "
            "Keras skips cuDNN under it)"
            if record.torch_compile
            else ""
        )
        return f"xla applies to TensorFlow and JAX; the {backend} backend runs eager{compile_note}."
    return ""


def prepare(
    config: RunConfig, *, seed: int, progress: Progress = no_progress, backend: str = ""
) -> BackendRun:
    """`config` built from `init_params(config, seed)`, placed, compiled and first-called by
    `backend`'s runner (default: this process's Keras backend). Raises SettingError, in one
    sentence, for what this backend cannot run."""
    backend = backend or keras.backend.backend()
    if message := _refusal(config, backend):
        raise SettingError(message)
    return runner(backend).prepare(config, seed=seed, progress=progress)


def check(config: RunConfig, seed: int = 0, backend: str = "") -> dict:
    """The forward and gradient oracles of every variant this backend builds at `config`'s sizes and
    precision: {"backend", "config", "forward", "gradients", "ok"}, JSON-able. A runtime's
    report is its runner's (every variant that converts, forward only)."""
    backend = backend or keras.backend.backend()
    if message := _refusal(config, backend):
        raise SettingError(message)
    if BACKEND_RECORDS[backend].exported:
        return runner(backend).check(config, seed=seed)
    forward = [outcome.to_dict() for outcome in check_variants(config, seed)]
    gradients = [outcome.to_dict() for outcome in check_gradients(config, seed)]
    return {
        "backend": backend,
        "config": config.to_dict(),
        "forward": forward,
        "gradients": gradients,
        "ok": all(entry["ok"] for entry in forward + gradients),
    }
