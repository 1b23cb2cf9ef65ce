"""`whatif`: the model on a built-in sound, untouched and under interventions (`--clamp`, `--set`,
`--silence`, `--switch`, placed by `--at`), run in TensorFlow and checked against the numpy
oracle (`hierlstm.inside.whatif_tf.what_if`); the outputs, each layer's largest change and, with
`--trained`, the trained model's prediction at every time step. Its settings are checked before
TensorFlow is imported, with the interventions parsed as the page parses them."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from hierlstm.cli.flags import (
    LEARN_TIME_STEPS,
    UsageError,
    config_from_args,
    seed_number,
    usage,
    whole_number,
)
from hierlstm.cli.format import shown, text_table
from hierlstm.config import RunConfig

if TYPE_CHECKING:  # numpy, which parsing does not import
    from hierlstm.inside.learning import Learning
    from hierlstm.inside.whatif import Intervention


@dataclasses.dataclass(frozen=True)
class WhatIfSettings:
    config: RunConfig
    sound: str
    interventions: tuple[Intervention, ...]
    learning: Learning | None  # with --trained
    seed: int


def whatif_settings(args) -> WhatIfSettings:
    """The command's settings, every intervention parsed and placed on the geometry (a bad
    name, value or range is one UsageError line)."""
    from hierlstm.inside.learning import Learning
    from hierlstm.inside.sounds import SOUNDS
    from hierlstm.inside.whatif import WhatIfRefused
    from hierlstm.inside.whatif_syntax import FLAGS, parse_interventions

    config = config_from_args(args, time_steps=LEARN_TIME_STEPS, batch_size=1)
    sound = args.sound or SOUNDS[0]
    if sound not in SOUNDS:
        raise UsageError(f"--sound must be one of {', '.join(SOUNDS)}; got {sound!r}.")
    seed = seed_number(args.seed or "0")
    flags = {name: getattr(args, name) or [] for name in FLAGS}
    flags["switch"] = [args.switch] if args.switch is not None else []
    with usage(WhatIfRefused):
        interventions = parse_interventions(flags, config)
    learning = None
    if args.trained or args.steps is not None:
        if not args.trained:
            raise UsageError("--steps sets the training of --trained; add --trained.")
        steps = whole_number("--steps", args.steps or "100", 0, 2**31 - 1)
        with usage():
            learning = Learning(steps=steps, seed=seed)
    return WhatIfSettings(config, sound, interventions, learning, seed)


def _float32(values) -> list:
    """Values computed in float32, each written with float32's shortest digits (0.3, not
    0.30000001192092896): [time][units]."""
    import numpy as np

    return [[float(str(np.float32(value))) for value in row] for row in values]


def cmd_whatif(args) -> int:
    import numpy as np

    from hierlstm.inside.sounds import SOUNDS, sound_input
    from hierlstm.inside.whatif import command_words, playing, predict
    from hierlstm.inside.whatif_tf import what_if
    from hierlstm.model.params import init_params

    settings = whatif_settings(args)
    config, seed = settings.config, settings.seed
    params, head = init_params(config, seed), None
    if settings.learning is not None:
        from hierlstm.inside.learner import learn

        curve = learn(config, settings.learning)
        params, head = curve.params, curve.head
    picture = sound_input(settings.sound, config.height, config.time_steps, seed)
    run = what_if(config, params, picture[None, :, :, None], settings.interventions, seed)
    document = {
        "sound": settings.sound,
        "seed": seed,
        "trained": head is not None,
        "sizes": {name: getattr(config, name) for name in SIZES},
        "interventions": [intervention.to_dict() for intervention in run.interventions],
        "command": command_words(run.interventions),
        "output": _float32(run.after["outer_h"][0]),  # (time, outer units), batch 1
        "baseline_output": _float32(run.before["outer_h"][0]),
        "summary": _float32(run.after["summary"][0]),  # (time, inner units)
        "baseline_summary": _float32(run.before["summary"][0]),
        "largest_change": run.change.largest,
        "first_changed_t": run.change.first_time,
        "line": run.change.line("en"),
        "oracle_difference": run.oracle_difference,
    }
    if head is not None:
        sound = np.full(config.time_steps, SOUNDS.index(settings.sound))
        labels = playing(run.interventions, sound, config.time_steps)
        guesses = {
            name: predict(head, values["outer_h"][0]).argmax(axis=-1)
            for name, values in (("baseline_prediction", run.before), ("prediction", run.after))
        }
        document["playing"] = [SOUNDS[index] for index in labels]
        for name, guess in guesses.items():
            document[name] = [SOUNDS[index] for index in guess]
            document[name.replace("prediction", "accuracy")] = float(np.mean(guess == labels))
    shown(args.json, document, lambda: report(document))
    return 0


SIZES = ("height", "time_steps", "filters", "kernel_size", "pool_height", "inner_units")
SIZES += ("outer_units",)


def report(document: dict) -> str:
    """The terminal's report of `cmd_whatif`'s document."""
    sizes = document["sizes"]
    trained = "after training" if document["trained"] else "before training"
    lines = [
        f"height {sizes['height']}, time {sizes['time_steps']}, {document['sound']} "
        f"(seed {document['seed']}), parameters {trained}",
        f"interventions: {document['command'] or 'none'}",
        document["line"],
        "",
        text_table(
            ("layer", "largest change", "first t changed"),
            [
                (view, f"{largest:.3g}", "" if first is None else first)
                for (view, largest), first in zip(
                    document["largest_change"].items(),
                    document["first_changed_t"].values(),
                    strict=True,
                )
            ],
        ),
        "",
        "TensorFlow against the numpy oracle under the interventions: max |difference| "
        f"{document['oracle_difference']:.1e}",
    ]
    if document["trained"]:
        rows = zip(
            document["playing"],
            document["baseline_prediction"],
            document["prediction"],
            strict=True,
        )
        lines += [
            "",
            text_table(
                ("t", "playing", "predicted untouched", "predicted under the interventions"),
                [(step, *row) for step, row in enumerate(rows)],
            ),
            f"right at {document['baseline_accuracy']:.0%} of the time steps untouched, "
            f"{document['accuracy']:.0%} under the interventions",
        ]
    return "\n".join(lines)
