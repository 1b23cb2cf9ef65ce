"""Equivalence check: every variant, built from one parameter set, against the numpy oracle, on
this process's Keras backend (the variants it has a builder for: `Variant.backends`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import keras
import numpy as np

from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.model.portable import forward_function, to_backend
from hierlstm.model.reference import reference_forward
from hierlstm.registry import VARIANTS

# Max abs difference allowed against the float64 reference. float32 is bounded by the issue;
# the mixed policies by their mantissas (float16: 10 bits, bfloat16: 7 bits) with headroom over
# the largest difference seen (about 6e-4 and 7e-3 at time 30).
TOLERANCES = {"float32": 1e-5, "mixed_float16": 5e-3, "mixed_bfloat16": 3e-2}
# The gradient check (`hierlstm.model.gradcheck`), per precision: (the largest relative error of
# a directional derivative against the float64 oracle; the largest difference between two
# variants' gradients, relative to the tensor's largest element), each 2-8x the largest seen over
# every variant, with and without XLA, at several shapes. The 16-bit ones are widest for fused
# under XLA, whose conv taps sum in 16 bits.
GRADIENT_TOLERANCES = {
    "float32": (1e-5, 5e-6),
    "mixed_float16": (0.1, 0.1),
    "mixed_bfloat16": (0.5, 0.5),
}


@dataclasses.dataclass(frozen=True)
class CheckResult:
    variant: str
    max_abs_diff: float
    tolerance: float
    error: str = ""  # one line when the variant could not run here (vectorized_map under XLA)

    @property
    def ok(self) -> bool:
        return bool(not self.error and self.max_abs_diff <= self.tolerance)

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "ok": self.ok}


def random_input(config: RunConfig, seed: int = 0) -> np.ndarray:
    """(batch_size, height, time_steps, 1) float32, standard normal."""
    rng = np.random.default_rng(seed + 1)
    shape = (config.batch_size, config.height, config.time_steps, 1)
    return rng.standard_normal(shape).astype(np.float32)


def run_variant(config: RunConfig, params, x: np.ndarray) -> np.ndarray:
    """`config.variant` built from `params`, run once compiled the backend's way
    (`hierlstm.model.portable.forward_function`: tf.function, jax.jit, torch eager); float64."""
    model = build_model(config, params)
    output = forward_function(model, config)(to_backend(x))
    return keras.ops.convert_to_numpy(output).astype(np.float64)


def backend_variants() -> list[str]:
    """The registered variants this process's Keras backend has a builder for."""
    backend = keras.backend.backend()
    return [name for name, variant in VARIANTS.items() if backend in variant.backends]


def check_variants(
    config: RunConfig,
    seed: int = 0,
    variants=None,
    failures: tuple[type[BaseException], ...] = (),
    describe: Callable[[BaseException], str] = str,
) -> list[CheckResult]:
    """Each variant's (default: every one this backend builds) max abs difference from
    `reference_forward` at `config`'s sizes. An error in `failures` is the variant's failure, a
    result whose `error` is `describe(error)`, and the next variant runs; the command line passes
    `hierlstm.timing.failures`' RUN_FAILURES and error_line, as a timed run's failure is told."""
    params = init_params(config, seed)
    x = random_input(config, seed)
    expected = reference_forward(params, x, pool_height=config.pool_height)
    tolerance = TOLERANCES[config.precision]
    results = []
    for name in variants or backend_variants():
        try:
            output = run_variant(config.replace(variant=name), params, x)
        except failures as error:  # e.g. vectorized_map, which XLA cannot compile
            results.append(CheckResult(name, float("inf"), tolerance, describe(error)))
            continue
        if output.shape != expected.shape:
            difference = float("inf")
        else:
            difference = float(np.max(np.abs(output - expected)))
        results.append(CheckResult(name, difference, tolerance))
    return results
