"""A learning run's settings, its data and its curve, without TensorFlow (`learner` trains): the
task is to say, at every time step, which sound is playing, in sequences of random segments
(`sounds.sound_sequences`). A notebook shows a `Curve` as a table, a row per measurement."""

from __future__ import annotations

import dataclasses

import numpy as np

from hierlstm.config import RunConfig, SettingError, check_whole
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.inside.sounds import SOUNDS, sound_sequences
from hierlstm.tables import Shown, Table, named

# Whole-number settings of a learning run and their bounds, one wording (`config.check_whole`).
LEARNING_BOUNDS = {"steps": (1, 2000), "train_sequences": (4, 512), "held_out": (4, 512)}
LEARNING_BOUNDS |= {"batch_size": (1, 256), "every": (1, 500)}


@dataclasses.dataclass(frozen=True)
class Learning:
    """A learning run: `steps` Adam updates on batches of `batch_size` drawn from
    `train_sequences` fixed sequences; both curves measured every `every` steps, on all the
    training sequences and on `held_out` others; `seed` makes the data and the parameters."""

    steps: int = 100
    batch_size: int = 16
    train_sequences: int = 64
    held_out: int = 32
    every: int = 10
    learning_rate: float = 0.01
    seed: int = 0

    def __post_init__(self):
        for name, (low, high) in LEARNING_BOUNDS.items():
            check_whole(name, getattr(self, name), low, high)
        if self.batch_size > self.train_sequences:
            raise SettingError(
                f"batch_size must be at most train_sequences ({self.train_sequences}); "
                f"got {self.batch_size}."
            )


@dataclasses.dataclass(frozen=True)
class Point:
    """Both curves at one step (0: before any update)."""

    step: int
    train_loss: float
    train_accuracy: float
    held_out_loss: float
    held_out_accuracy: float


@dataclasses.dataclass(frozen=True, repr=False)
class Curve(Shown):
    """A learning run so far: its points, the accuracy of always guessing the held-out
    sequences' commonest sound (`chance`), the parameters and head now, whether it stopped
    early. A notebook shows it as a table, a row per measurement, and how it ended
    (`show("zh")`: in Chinese); `hierlstm.charts.learning_figure` draws it."""

    config: RunConfig
    learning: Learning
    points: tuple[Point, ...]
    chance: float
    params: dict
    head: dict
    stopped: bool = False

    @property
    def done(self) -> bool:
        return self.stopped or (bool(self.points) and self.points[-1].step == self.learning.steps)

    def table(self, lang: str = DEFAULT_LANGUAGE):
        """A row per measurement: step, loss and accuracy on the training and the held-out
        sequences, headed in `lang`."""
        rows = [
            {
                "step": point.step,
                "train_loss": round(point.train_loss, 3),
                "train_accuracy": f"{point.train_accuracy:.1%}",
                "held_out_loss": round(point.held_out_loss, 3),
                "held_out_accuracy": f"{point.held_out_accuracy:.1%}",
            }
            for point in self.points
        ]
        return named(rows, "inside.col.", lang)

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        steps, notes = self.learning.steps, []
        last = self.points[-1].step if self.points else 0
        if self.points:
            accuracy = self.points[-1].held_out_accuracy
            done = {"accuracy": accuracy, "step": last, "chance": self.chance}
            notes.append(t("inside.learn.done", lang, **done))
        if self.stopped:
            notes.append(t("inside.learn.stopped", lang, step=last, steps=steps))
        title = t("inside.fig.learning", lang, step=last, steps=steps)
        return [Table(title, self.table(lang), tuple(notes))]

    def to_dict(self) -> dict:
        return {
            "steps": self.learning.steps,
            "chance": self.chance,
            "stopped": self.stopped,
            "points": [dataclasses.asdict(point) for point in self.points],
        }


def learning_data(config: RunConfig, learning: Learning):
    """((train inputs, labels), (held-out inputs, labels)): (N, H, T, 1) and (N, T)."""
    rng = np.random.default_rng([learning.seed, 37])
    train = sound_sequences(learning.train_sequences, config.height, config.time_steps, rng)
    held_out = sound_sequences(learning.held_out, config.height, config.time_steps, rng)
    return train, held_out


def chance(labels: np.ndarray) -> float:
    """The accuracy of always guessing the commonest sound in `labels` (any shape)."""
    return float(np.bincount(labels.ravel(), minlength=len(SOUNDS)).max() / labels.size)
