"""The model learns which sound is playing at every time step: seeded and small, its held-out
accuracy ends well above chance; a callback that says no stops it."""

from hierlstm.config import RunConfig
from hierlstm.inside.learner import learn
from hierlstm.inside.learning import Learning

CONFIG = RunConfig(height=12, time_steps=16, filters=4, inner_units=8, outer_units=12)
SMALL = Learning(steps=60, train_sequences=32, held_out=16, every=30, learning_rate=0.02)


def test_held_out_accuracy_ends_well_above_chance():
    curve = learn(CONFIG, SMALL)
    first, last = curve.points[0], curve.points[-1]
    assert [point.step for point in curve.points] == [0, 30, 60] and not curve.stopped
    assert first.held_out_accuracy < curve.chance + 0.1  # it starts near chance
    assert last.held_out_accuracy > max(0.7, curve.chance + 0.35), (curve.chance, last)
    assert last.train_loss < first.train_loss / 2


def test_a_callback_returning_false_stops_the_run_where_it_is():
    seen = []
    curve = learn(CONFIG, SMALL, lambda curve: seen.append(curve) or False)
    assert len(seen) == 1 and curve.stopped and [p.step for p in curve.points] == [0]
