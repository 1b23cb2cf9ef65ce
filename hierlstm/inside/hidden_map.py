"""The hidden states as a map: the outer h and the summaries (the inner LSTM's last h) at every
time step of a few sequences of random sounds, projected to two dimensions by PCA (numpy's SVD),
one point a time step, coloured by the sound playing; the states under an intervention are
placed on the same two axes, so the two can be compared. Values from the oracle
(`whatif.oracle_values`). No TensorFlow."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from hierlstm.config import RunConfig
from hierlstm.inside.sounds import sound_sequences
from hierlstm.inside.whatif import Intervention, oracle_values, playing
from hierlstm.model.params import Params

MAPPED = ("outer_h", "summary")  # the layers a map shows
SEQUENCES = 8  # sequences of random sounds: a few hundred points at the page's lengths


@dataclasses.dataclass(frozen=True)
class Axes:
    """Two principal axes of a cloud of points: its mean (units,), the axes (2, units), and the
    share of the variance along each."""

    mean: np.ndarray
    axes: np.ndarray
    explained: tuple[float, float]

    def project(self, points: np.ndarray) -> np.ndarray:
        """(N, units) -> (N, 2)."""
        return (points - self.mean) @ self.axes.T


def principal_axes(points: np.ndarray) -> Axes:
    """The first two principal axes of (N, units) points, each signed so that its largest
    loading is positive (the same cloud always gives the same picture); an axis the points do
    not span is zero."""
    mean = points.mean(axis=0)
    _left, singular, right = np.linalg.svd(points - mean, full_matrices=False)
    axes = np.zeros((2, points.shape[1]))
    axes[: min(2, len(right))] = right[:2]
    signs = np.sign(axes[np.arange(2), np.argmax(np.abs(axes), axis=1)])
    axes *= np.where(signs == 0, 1.0, signs)[:, None]
    variance = np.zeros(2)
    variance[: min(2, len(singular))] = singular[:2] ** 2
    total = float(np.sum(singular**2)) or 1.0
    return Axes(mean, axes, (float(variance[0] / total), float(variance[1] / total)))


@dataclasses.dataclass(frozen=True)
class HiddenMap:
    """One layer's map at one parameter set: `points` (N, 2) of the untouched run and their
    `labels` (N,), the index in SOUNDS of the sound playing; `moved` (N, 2) and `moved_labels`
    under the interventions (None without any)."""

    layer: str
    params: str
    axes: Axes
    points: np.ndarray
    labels: np.ndarray
    moved: np.ndarray | None = None
    moved_labels: np.ndarray | None = None


def map_sequences(config: RunConfig, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The sequences a map shows: inputs (SEQUENCES, H, T, 1) and labels (SEQUENCES, T)."""
    rng = np.random.default_rng([seed, 39])
    return sound_sequences(SEQUENCES, config.height, config.time_steps, rng)


def hidden_maps(
    config: RunConfig,
    params_sets: Mapping[str, Params],
    interventions: Sequence[Intervention] = (),
    seed: int = 0,
) -> list[HiddenMap]:
    """A map per layer of `MAPPED` and per parameter set ({"initial": params, "trained":
    ...}), each on its untouched run's principal axes."""
    inputs, labels = map_sequences(config, seed)
    moved_labels = playing(interventions, labels, config.time_steps).ravel()
    maps = []
    for name, params in params_sets.items():
        before = oracle_values(params, inputs, (), config, seed)
        after = (
            oracle_values(params, inputs, interventions, config, seed) if interventions else None
        )
        for layer in MAPPED:
            points = before[layer].reshape(-1, before[layer].shape[-1])  # (N*T, units)
            axes = principal_axes(points)
            moved = None if after is None else axes.project(after[layer].reshape(points.shape))
            maps.append(
                HiddenMap(
                    layer,
                    name,
                    axes,
                    axes.project(points),
                    labels.ravel(),
                    moved,
                    None if after is None else moved_labels,
                )
            )
    return maps
