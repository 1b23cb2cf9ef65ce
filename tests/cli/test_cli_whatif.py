"""`python -m hierlstm whatif`, in this process at tiny sizes: what the equations decide alone,
read from the command's JSON; nothing before an intervention's start changes; the report; the
trained model's prediction beside the sound playing. Bad arguments: tests/cli/test_cli.py."""

import json

import numpy as np
import pytest
from factories import run_cli as run

from hierlstm.cli.parser import WHATIF_SOUNDS
from hierlstm.inside.sounds import SOUNDS

TINY = "whatif --height 6 --filters 2 --inner-units 3 --outer-units 4 --time-steps 6"


def whatif(capsys, *flags: str) -> dict:
    status, out, err = run(capsys, TINY, *flags, "--json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    for name in ("output", "baseline_output"):
        assert np.shape(document[name]) == (6, 4)  # [time][outer units], batch 1
    assert document["oracle_difference"] < 1e-5  # TensorFlow against the oracle
    return document


# Interventions whose outputs the equations decide alone: h = o · tanh(c), c = f · c + i · g.
DECIDED = {
    "--clamp outer.o=0": 0.0,
    "--clamp outer.f=0 --clamp outer.i=0": 0.0,
    "--set outer.c=0": 0.0,
    "--set outer.h=0.3": 0.3,
    "--clamp outer.i=1 --clamp outer.f=0 --clamp outer.g=-0.5 --clamp outer.o=1": np.tanh(-0.5),
}


@pytest.mark.parametrize("line", DECIDED)
def test_what_the_equations_decide_is_what_the_command_gives(capsys, line):
    document = whatif(capsys, line)
    assert np.allclose(document["output"], DECIDED[line], rtol=0, atol=1e-6)
    assert not np.allclose(document["baseline_output"], DECIDED[line], rtol=0, atol=1e-3)
    assert document["first_changed_t"]["outer_h"] == 0


def test_the_inner_output_gate_closed_makes_every_summary_0_and_earlier_steps_stay(capsys):
    document = whatif(capsys, "--clamp inner.o=0 --at t=2:")
    summary, baseline = np.array(document["summary"]), np.array(document["baseline_summary"])
    assert np.all(summary[2:] == 0) and np.all(baseline[2:] != 0)
    assert np.array_equal(summary[:2], baseline[:2])
    output, untouched = np.array(document["output"]), np.array(document["baseline_output"])
    assert np.array_equal(output[:2], untouched[:2]) and not np.array_equal(output, untouched)
    assert document["largest_change"]["summary"] == pytest.approx(np.abs(baseline[2:]).max())
    assert document["largest_change"]["conv"] == 0 and document["first_changed_t"]["conv"] is None
    assert document["line"].startswith("Outputs changed from t = 2 on, by at most ")
    assert document["interventions"] == [
        {"action": "clamp", "lstm": "inner", "gate": "o", "value": 0.0, "t": [2, None]}
        | {"s": [None, None]}
    ]


def test_the_report_names_each_layer_s_change_and_the_oracle(capsys):
    status, out, _ = run(capsys, TINY, "--silence channel=1 --at s=0:1")
    assert status == 0
    lines = out.splitlines()
    assert lines[1] == "interventions: --silence channel=1 --at s=0:1"
    assert lines[2].startswith("Outputs changed from t = 0 on")
    rows = {line.split()[0]: line.split()[1:] for line in lines[6:24] if line.strip()}
    assert rows["input"] == ["0"] and float(rows["conv"][0]) > 0 and rows["conv"][1] == "0"
    assert lines[-1].startswith("TensorFlow against the numpy oracle under the interventions")


def test_trained_the_prediction_stands_beside_the_sound_playing(capsys):
    document = whatif(capsys, "--switch noise --at t=3: --trained --steps 1")
    assert document["trained"] is True
    assert document["playing"] == ["rising"] * 3 + ["noise"] * 3
    for name in ("prediction", "baseline_prediction"):
        assert len(document[name]) == 6 and set(document[name]) <= set(SOUNDS)
    assert 0 <= document["accuracy"] <= 1 and 0 <= document["baseline_accuracy"] <= 1
    assert document["baseline_prediction"][:2] == document["prediction"][:2]  # before the reach


def test_the_sound_flag_names_the_built_in_sounds():
    assert WHATIF_SOUNDS.split(" | ") == list(SOUNDS)
