"""`python -m hierlstm learn`: the curve as a table growing a line a measurement, or as JSON."""

import json

from hierlstm.cli import main

TINY = ["--height", "6", "--filters", "2", "--inner-units", "3", "--outer-units", "4"]
TINY += ["--time-steps", "5", "--steps", "2", "--every", "1"]


def test_learn_prints_the_curve_as_json(capsys):
    assert main(["inside", *TINY, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [point["step"] for point in document["points"]] == [0, 1, 2]
    assert 0 < document["chance"] <= 1 and document["stopped"] is False
    assert set(document["points"][0]) == {
        "step",
        "train_loss",
        "train_accuracy",
        "held_out_loss",
        "held_out_accuracy",
    }


def test_learn_prints_the_curve_as_a_table_and_the_chance_line(capsys):
    assert main(["inside", *TINY]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[:3] == ["step", "train", "loss"]
    assert [line.split()[0] for line in lines[3:6]] == ["0", "1", "2"]
    assert lines[-1].startswith("chance (always the commonest sound): ")
