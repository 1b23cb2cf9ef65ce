"""Gradient check: every variant's gradients of the training loss against float64 central
differences of the numpy reference (`reference.reference_loss`), and against each other.

For each parameter tensor and the input, `DIRECTIONS` random unit directions d: the oracle's D =
(L(p + h d) - L(p - h d)) / (2 h), the variant's g.d. A direction's error is |g.d - D| / max(|D|,
S), S the tensor's mean |D|, so a direction where the loss hardly changes does not divide by nearly
nothing. Directions crossing a max-pool tie are redrawn (`SMOOTH`); tolerances are per precision
(`check.GRADIENT_TOLERANCES`)."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.check import GRADIENT_TOLERANCES, backend_variants, random_input
from hierlstm.model.loss import loss_target
from hierlstm.model.params import init_params
from hierlstm.model.portable import gradients as backend_gradients
from hierlstm.model.portable import op_errors
from hierlstm.model.reference import reference_loss

# Central differences in float64 along a unit direction: h = 1e-5 keeps the truncation error
# (h^2 |L'''| / 6) and the rounding error (1e-16 |L| / h) near 1e-11. Where a max-pool window
# ties within h, the loss has a kink and the difference averages two slopes, so each direction is
# also taken with h / 4; where the two disagree by more than SMOOTH, the direction is drawn again.
STEP = 1e-5
SMOOTH = 1e-4  # relative; plus ROUNDING absolute
# The oracle's own rounding at h / 4 (1e-16 |L| / 2.5e-6, with headroom): the absolute floor of
# every comparison, so a gradient that is exactly zero (the outer recurrent kernel's at time 1,
# which multiplies a zero state) compares equal to a zero difference.
ROUNDING = 1e-10
ATTEMPTS = 10  # draws per direction before the point itself is taken to sit on a tie
DIRECTIONS = 3  # random unit directions per tensor
INPUT = "input"  # the input's gradient, named beside the parameters'


@dataclasses.dataclass(frozen=True)
class GradientCheckResult:
    """One variant's gradients against the oracle and against the reference variant."""

    variant: str
    worst_error: float  # largest |g.d - D| / max(|D|, mean |D| of the tensor), every direction
    worst_tensor: str  # the parameter (or "input") of that direction
    tolerance: float
    max_difference: float  # largest |g - g_ref| / max|g_ref| over tensors (0 for the reference)
    difference_tolerance: float
    reference_variant: str
    directions: int  # directional derivatives checked
    error: str = ""  # the first line of TensorFlow's error when the variant could not run

    @property
    def ok(self) -> bool:
        return bool(
            not self.error
            and self.worst_error <= self.tolerance
            and self.max_difference <= self.difference_tolerance
        )

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "ok": self.ok}


def central_difference(base, x, target, name: str, direction, step: float, pool_height: int):
    """(L(p + step d) - L(p - step d)) / (2 step) in float64, d moving tensor `name` only (the
    input when `name` is `INPUT`)."""
    losses = []
    for offset in (step * direction, -step * direction):
        if name == INPUT:
            loss = reference_loss(base, x + offset, target, pool_height=pool_height)
        else:
            moved = {**base, name: base[name] + offset}
            loss = reference_loss(moved, x, target, pool_height=pool_height)
        losses.append(loss)
    return (losses[0] - losses[1]) / (2 * step)


def oracle_directions(params, x, target, rng, *, pool_height: int) -> list:
    """[(tensor name, unit direction, D)] for every parameter tensor and the input (`INPUT`). Raises
    RuntimeError if a tensor has no smooth direction in `ATTEMPTS` draws."""
    base = {name: np.asarray(value, np.float64) for name, value in params.items()}
    x = np.asarray(x, np.float64)
    shapes = {**{name: value.shape for name, value in base.items()}, INPUT: x.shape}
    found = []
    for name, shape in shapes.items():
        for _ in range(DIRECTIONS):
            for _ in range(ATTEMPTS):
                direction = rng.standard_normal(shape)
                direction /= np.linalg.norm(direction)
                coarse, fine = (
                    central_difference(base, x, target, name, direction, step, pool_height)
                    for step in (STEP, STEP / 4)
                )
                if abs(coarse - fine) <= SMOOTH * abs(fine) + ROUNDING:
                    found.append((name, direction, coarse))
                    break
            else:
                raise RuntimeError(f"no smooth direction for {name} in {ATTEMPTS} draws")
    return found


def variant_gradients(config: RunConfig, params, x, target) -> dict[str, np.ndarray]:
    """`config.variant` built from `params`: float64 gradients of the loss by parameter name, and
    the input's under `INPUT`, on this process's backend (`portable.gradients`)."""
    _, found, input_grad = backend_gradients(build_model(config, params), config, x, target)
    return {**found, INPUT: input_grad}


def _worst_error(gradients, directions) -> tuple[float, str]:
    scales: dict[str, list[float]] = {}
    for name, _, wanted in directions:
        scales.setdefault(name, []).append(abs(wanted))
    worst, where = 0.0, ""
    for name, direction, wanted in directions:
        found = float(np.sum(gradients[name] * direction))
        scale = max(abs(wanted), float(np.mean(scales[name])), ROUNDING)
        error = abs(found - wanted) / scale
        if not np.isfinite(error):
            return float("inf"), name
        if error >= worst:
            worst, where = error, name
    return worst, where


def _max_difference(gradients, reference) -> float:
    differences = [
        np.max(np.abs(gradients[name] - reference[name]))
        / max(np.max(np.abs(reference[name])), 1e-30)
        for name in reference
    ]
    return float(max(differences))


@dataclasses.dataclass(frozen=True)
class GradientProblem:
    """What every variant is checked on: one config's parameters, input, target and the
    oracle's smooth directions with their directional derivatives."""

    config: RunConfig
    params: dict
    inputs: np.ndarray  # (B, H, T, 1) float32
    target: np.ndarray  # (B, T, outer) float32
    directions: list  # [(tensor name, unit direction, D)], see `oracle_directions`


def gradient_problem(config: RunConfig, seed: int = 0) -> GradientProblem:
    """The parameters, input and target of `seed` and the oracle's directions for `config`."""
    params = init_params(config, seed)
    inputs = random_input(config, seed)
    target = loss_target(config, seed)
    rng = np.random.default_rng([seed, 3])
    directions = oracle_directions(params, inputs, target, rng, pool_height=config.pool_height)
    return GradientProblem(config, params, inputs, target, directions)


def judge(
    name: str, gradients, problem: GradientProblem, reference, reference_name: str
) -> GradientCheckResult:
    """`name`'s gradients (`variant_gradients`) against the oracle and a reference variant's."""
    tolerance, difference_tolerance = GRADIENT_TOLERANCES[problem.config.precision]
    worst, where = _worst_error(gradients, problem.directions)
    return GradientCheckResult(
        variant=name,
        worst_error=worst,
        worst_tensor=where,
        tolerance=tolerance,
        max_difference=_max_difference(gradients, reference),
        difference_tolerance=difference_tolerance,
        reference_variant=reference_name,
        directions=len(problem.directions),
    )


def _failure_line(error) -> str:
    """One line for an op error: the op and node XLA has no kernel for (its raw message is a
    node dump), else the message's first line."""
    import tensorflow as tf

    node = re.search(r"\{\{node ([^}]+)\}\} = (\w+)", error.message)
    if isinstance(error, tf.errors.UnimplementedError) and node:
        return f"UnimplementedError: no kernel for the {node.group(2)} op at {node.group(1)}"[:300]
    message = (error.message.strip().splitlines() or [type(error).__name__])[0]
    return f"{type(error).__name__}: {message}"[:300]


def check_gradients(config: RunConfig, seed: int = 0, variants=None) -> list[GradientCheckResult]:
    """Every variant's gradients (`variants`, or all this backend builds) against the oracle and
    against the first variant that ran. A variant that cannot run is a result with its `error`."""
    problem = gradient_problem(config, seed)
    tolerance, difference_tolerance = GRADIENT_TOLERANCES[config.precision]
    results, reference, reference_name = [], None, ""
    for name in variants or backend_variants():
        try:
            gradients = variant_gradients(
                config.replace(variant=name), problem.params, problem.inputs, problem.target
            )
        except op_errors() as error:  # an op this device or XLA cannot run
            failure = _failure_line(error)
            results.append(
                GradientCheckResult(
                    name, math.inf, "", tolerance, math.inf, difference_tolerance,
                    reference_name, 0, error=failure,
                )
            )  # fmt: skip
            continue
        if reference is None:
            reference, reference_name = gradients, name
        results.append(judge(name, gradients, problem, reference, reference_name))
    return results
