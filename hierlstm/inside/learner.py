"""The model learning the sounds task (`learning`): a Dense head on the outer LSTM's output
(B, T, outer) -> (B, T, sounds) makes the model a classifier; it starts from the one parameter set
(`init_params`) the values views show, trains with Adam on a fixed training set, and reports its
loss and accuracy on the training and the held-out sequences every few steps through a callback
that can stop it."""

from __future__ import annotations

from collections.abc import Callable

import keras
import numpy as np

from hierlstm.config import RunConfig
from hierlstm.inside.learning import Curve, Learning, Point, chance, learning_data
from hierlstm.inside.sounds import SOUNDS
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params, read_params


def classifier(config: RunConfig, params, seed: int = 0) -> keras.Model:
    """The `folded` model of `config` from `params`, with a Dense head drawn from `seed`: (B, H,
    T, 1) -> (B, T, len(SOUNDS)) logits. Learning runs in float32."""
    config = config.replace(variant="folded", precision="float32", xla=False)
    model = build_model(config, params)
    head = keras.layers.Dense(
        len(SOUNDS), name="head", kernel_initializer=keras.initializers.GlorotUniform(seed=seed)
    )
    logits = head(model.output)  # (B, T, outer) -> sounds
    return keras.Model(model.input, logits, name="classifier")


def learn(
    config: RunConfig,
    learning: Learning,
    on_progress: Callable[[Curve], bool | None] = lambda curve: None,
) -> Curve:
    """Trains `classifier(config, init_params(config, seed), seed)` for `learning.steps` steps;
    after step 0 and every `learning.every` steps (and the last) calls `on_progress(curve)`,
    which stops the run by returning False. Returns the last curve: the same for the same
    config and `learning`."""
    (train_x, train_y), (held_x, held_y) = learning_data(config, learning)
    model = classifier(config, init_params(config, learning.seed), learning.seed)
    model.compile(
        optimizer=keras.optimizers.Adam(learning.learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")],
    )
    rng = np.random.default_rng([learning.seed, 38])
    points = []

    def measure(step: int) -> Point:
        train = model.evaluate(train_x, train_y, batch_size=64, verbose=0, return_dict=True)
        held = model.evaluate(held_x, held_y, batch_size=64, verbose=0, return_dict=True)
        return Point(step, train["loss"], train["accuracy"], held["loss"], held["accuracy"])

    def curve(stopped=False) -> Curve:
        head = model.get_layer("head")
        weights = {
            name: keras.ops.convert_to_numpy(getattr(head, name)) for name in ("kernel", "bias")
        }
        return Curve(
            config, learning, tuple(points), chance(held_y), read_params(model), weights, stopped
        )

    for step in range(learning.steps + 1):
        if step % learning.every == 0 or step == learning.steps:
            points.append(measure(step))
            if on_progress(curve()) is False and step < learning.steps:
                return curve(stopped=True)
        if step < learning.steps:
            batch = rng.choice(len(train_x), learning.batch_size, replace=False)
            model.train_on_batch(train_x[batch], train_y[batch])
    return curve()


def learn_job(config: RunConfig, learning: Learning, progress: Callable[..., None]) -> Curve:
    """`learn` as a page's run, which may go to a worker (`hierlstm.app.runs.Plan`): after each
    point of the curve, `progress(fraction, message, curve)` sends the curve so far for the page
    to draw. A run is stopped by cancelling it (a rerun), not by the callback."""

    def on_progress(curve: Curve) -> None:
        point = curve.points[-1]
        progress(point.step / learning.steps, f"step {point.step} of {learning.steps}", curve)

    return learn(config, learning, on_progress)
