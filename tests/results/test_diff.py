"""Two runs compared (`hierlstm.results.diff`): the ratio B/A and its interval against
independent computations (cases whose answer is exact, a bootstrap written out with Python's
own random module, the normal theory of a median's spread), the verdicts on constructed cases,
`changed` exactly, and every refusal in both languages. No TensorFlow."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest
from factories import make_failed_result, make_result, make_training_result

from hierlstm.i18n import t
from hierlstm.results import diff
from hierlstm.results.diff import DiffError, compare_rows
from hierlstm.results.store import ResultStore


def row(result=None, id="a" * 8, created_at="2026-01-01T00:00:00+00:00", **changes):
    """A stored row as `ResultStore.rows()` gives it, without a file."""
    result = make_result(**changes) if result is None else result
    return {"id": id, "created_at": created_at, "host": "here", **result.to_row()}


def noisy(median, n, spread, seed):
    """n lognormal times around `median` (relative spread `spread`), shape (n,)."""
    return median * np.exp(np.random.default_rng(seed).normal(0, spread, n))


def reference_bootstrap(a, b, resamples=20_000, seed=1):
    """The 95 % percentile interval of median(b*) / median(a*), resampled with Python's
    `random` (another generator and another median than the module's)."""
    generator = random.Random(seed)
    ratios = sorted(
        statistics.median(generator.choices(list(b), k=len(b)))
        / statistics.median(generator.choices(list(a), k=len(a)))
        for _ in range(resamples)
    )
    return ratios[int(0.025 * resamples)], ratios[int(0.975 * resamples) - 1]


def test_twice_the_time_is_a_ratio_of_exactly_two_with_a_degenerate_interval():
    a = np.full(20, 0.0125)
    compared = compare_rows(row(id="A"), row(id="B"), a, 2 * a)
    assert (compared.ratio, compared.low, compared.high) == (2.0, 2.0, 2.0)
    assert compared.verdict == "slower" and compared.method == "bootstrap"
    assert (compared.id_a, compared.id_b) == ("A", "B")


def test_the_bootstrap_interval_agrees_with_one_written_out_independently():
    a = noisy(0.0125, 31, 0.05, seed=3)
    compared = compare_rows(row(), row(), a, 2 * a)
    assert compared.ratio == 2.0  # median(2a) = 2 median(a), exactly
    low, high = reference_bootstrap(a, 2 * a)
    assert compared.low < 2.0 < compared.high
    width = high - low
    assert compared.low == pytest.approx(low, abs=0.1 * width)
    assert compared.high == pytest.approx(high, abs=0.1 * width)
    assert compared.verdict == "slower"


def test_overlapping_noisy_runs_are_within_noise_and_a_clear_shift_is_not():
    a, b = noisy(0.0125, 30, 0.1, seed=1), noisy(0.0125, 30, 0.1, seed=2)
    same = compare_rows(row(), row(), a, b)
    assert same.low < 1 < same.high and same.verdict == "within_noise"
    assert same.ratio == pytest.approx(np.median(b) / np.median(a), rel=1e-12)
    assert compare_rows(row(), row(), a, 0.8 * b).verdict == "faster"
    assert compare_rows(row(), row(), a, 1.25 * b).verdict == "slower"


def test_the_verdict_s_band_is_one_percent_either_side():
    assert diff.verdict(0.95, 0.9899) == "faster"
    assert diff.verdict(0.95, 0.99) == "within_noise"  # touches the band
    assert diff.verdict(1.0101, 1.2) == "slower"
    assert diff.verdict(1.01, 1.2) == "within_noise"
    assert diff.verdict(0.98, 1.02) == "within_noise"
    assert diff.BAND == 0.01


def test_stored_rows_without_samples_take_the_median_s_normal_standard_error():
    row_a = row(step_changes={"median": 0.010, "iqr": 0.0010}, repeats=25)
    row_b = row(step_changes={"median": 0.012, "iqr": 0.0018}, repeats=16)
    compared = compare_rows(row_a, row_b)
    # sd(median) = sqrt(pi / 2) * sigma / sqrt(n), sigma = IQR / (2 * 0.6744897501960817).
    relative = [
        math.sqrt(math.pi / 2) * iqr / (2 * 0.6744897501960817) / math.sqrt(n) / median
        for median, iqr, n in ((0.010, 0.0010, 25), (0.012, 0.0018, 16))
    ]
    half_width = 1.959963984540054 * math.sqrt(relative[0] ** 2 + relative[1] ** 2)
    assert compared.method == "iqr" and compared.ratio == pytest.approx(1.2, rel=1e-12)
    assert compared.low == pytest.approx(1.2 * math.exp(-half_width), rel=1e-12)
    assert compared.high == pytest.approx(1.2 * math.exp(half_width), rel=1e-12)
    assert compared.verdict == "slower"
    only_one = compare_rows(row_a, row_b, samples_a=[0.01, 0.011, 0.009])
    assert only_one.method == "iqr" and only_one.low == compared.low


def test_the_fallback_interval_is_about_as_wide_as_the_bootstrap_of_the_same_samples():
    a, b = noisy(0.010, 400, 0.05, seed=5), noisy(0.011, 400, 0.05, seed=6)
    stored = [
        row(
            step_changes={
                "median": float(np.median(x)),
                "iqr": float(np.subtract(*np.percentile(x, [75, 25]))),
            },
            repeats=len(x),
        )
        for x in (a, b)
    ]
    from_rows = compare_rows(*stored)
    from_samples = compare_rows(*stored, a, b)
    assert from_rows.method == "iqr" and from_samples.method == "bootstrap"
    assert from_rows.high - from_rows.low == pytest.approx(
        from_samples.high - from_samples.low, rel=0.25
    )


def test_the_fallback_calls_two_runs_of_one_distribution_within_noise_nineteen_times_in_20():
    calls = []
    for trial in range(200):
        a, b = noisy(0.01, 20, 0.2, seed=2 * trial), noisy(0.01, 20, 0.2, seed=2 * trial + 1)
        stored = [
            row(
                step_changes={
                    "median": float(np.median(x)),
                    "iqr": float(np.subtract(*np.percentile(x, [75, 25]))),
                },
                repeats=20,
            )
            for x in (a, b)
        ]
        calls.append(compare_rows(*stored).verdict)
    assert calls.count("within_noise") >= 0.95 * len(calls) - 4, calls.count("within_noise")
    assert calls.count("within_noise") < len(calls)  # an interval, not a blanket


def test_changed_is_every_differing_setting_device_and_version_and_nothing_else():
    base = make_result()
    other = make_result(
        config_changes={"batch_size": 4, "xla": True},
        device="/GPU:0 (NVIDIA H100)",
        versions={**base.versions, "keras": "3.99.0"},
        step_changes={"median": 0.5},  # a measurement, not a setting
    )
    compared = compare_rows(row(base), row(other, id="b" * 8, created_at="2027-01-01"))
    assert compared.changed == {
        "batch_size": [2, 4],
        "xla": [False, True],
        "device": [base.device, "/GPU:0 (NVIDIA H100)"],
        "keras_version": [base.versions["keras"], "3.99.0"],
    }
    assert compare_rows(row(base), row(base, id="c" * 8)).changed == {}


def test_changed_is_plain_python_from_a_stored_frame(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite3")
    first = store.add(make_result())
    second = store.add(make_result(config_changes={"time_steps": 8}))
    rows = store.rows().to_dict("records")
    compared = compare_rows(diff.find_row(rows, first), diff.find_row(rows, second[:6]))
    assert compared.changed == {"time_steps": [4, 8]}
    assert all(type(value) is int for value in compared.changed["time_steps"])
    document = compared.to_dict()
    assert {"ratio", "low", "high", "verdict", "changed", "rule"} <= set(document)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_refusals_are_one_sentence_in_each_language(lang):
    ok, failed = row(), row(make_failed_result(), id="f" * 8)
    training = row(make_training_result(), id="t" * 8)
    cases = {
        "results.diff.refuse.failed": lambda: compare_rows(ok, failed),
        "results.diff.refuse.task": lambda: compare_rows(ok, training),
        "results.diff.refuse.unknown": lambda: diff.find_row([ok], "nothing"),
        "results.diff.refuse.ambiguous": lambda: diff.find_row([ok, row(id="aaaab")], "aaaa"),
    }
    for key, refused in cases.items():
        with pytest.raises(DiffError) as raised:
            refused()
        sentence = raised.value.sentence(lang)
        assert raised.value.key == key and "\n" not in sentence
        assert sentence == t(key, lang, **raised.value.values) != key
    assert "ResourceExhaustedError" in str(pytest.raises(DiffError, compare_rows, failed, ok).value)


def test_the_rule_names_its_method_and_band_in_both_languages():
    stored, sampled = compare_rows(row(), row()), compare_rows(row(), row(), [1, 2], [1, 2])
    assert "IQR" in stored.rule("en") and "bootstrap" in sampled.rule("en")
    assert "0.99" in stored.rule("en") and "1.01" in stored.rule("zh")
    assert "torch.utils.benchmark" in stored.rule("zh") and stored.rule("zh") != stored.rule("en")


def test_the_previous_run_is_the_newest_earlier_ok_one_of_the_same_settings_and_device():
    now = row(id="now", created_at="2026-01-05")
    rows = [
        now,
        row(id="older", created_at="2026-01-01"),
        row(id="newer", created_at="2026-01-03"),
        row(id="later", created_at="2026-01-09"),  # after this run
        row(id="batch", created_at="2026-01-04", config_changes={"batch_size": 4}),
        row(id="gpu", created_at="2026-01-04", device="/GPU:0"),
        row(make_failed_result(), id="failed", created_at="2026-01-04"),
        row(id="sibling", created_at="2026-01-04T12"),  # same invocation
    ]
    assert diff.previous_row(rows, now, exclude=["sibling"])["id"] == "newer"
    assert diff.previous_row(rows, now)["id"] == "sibling"
    assert diff.previous_row([now], now) is None


def test_stored_samples_are_used_when_a_row_keeps_them():
    a, b = noisy(0.0125, 25, 0.1, seed=7), noisy(0.0100, 25, 0.1, seed=8)
    row_a = row(step_changes={"samples": tuple(a.tolist())})
    row_b = row(step_changes={"samples": tuple(b.tolist())}, id="b" * 8)
    from_rows = compare_rows(row_a, row_b)
    assert from_rows == compare_rows(row(), row(id="b" * 8), a, b)
    assert from_rows.method == "bootstrap"
    assert from_rows.ratio == pytest.approx(np.median(b) / np.median(a), rel=1e-12)
    assert compare_rows(row_a, row(id="b" * 8)).method == "iqr"  # B kept none
    assert "samples_json" not in compare_rows(row_a, row_b).changed
