"""Weight sharing, two ways (hierlstm.model.sharing): what is shared, what is not, what it costs."""

import pytest

from hierlstm.config import Timing
from hierlstm.model.sharing import FORMS, build_pair, pair_inputs, sharing_report, time_pair


@pytest.mark.parametrize("form", FORMS)
def test_one_set_of_weights_independent_states_gradients_add_up(form):
    model = build_pair(form, units=8, rows=5, features=3)
    report = sharing_report(model, pair_inputs(4, 5, 3))
    assert report.same_objects
    assert report.variables_a == report.variables_b and len(report.variables_a) == 3
    assert report.param_count == 4 * 8 * (3 + 8 + 1)  # one LSTM's kernel, recurrent, bias
    assert report.unshared_param_count == 2 * report.param_count
    assert report.different_inputs_diff > 0
    assert report.equal_inputs_diff == 0
    assert report.state_leak_diff == 0
    assert min(report.gradient_norms_a) > 0 and min(report.gradient_norms_b) > 0
    assert report.gradient_sum_relative_error < 1e-5


def test_both_forms_compute_the_same_function_from_the_same_weights():
    cell, layer = (build_pair(form, units=6, rows=4, features=2) for form in FORMS)
    layer.set_weights(cell.get_weights())
    inputs = pair_inputs(3, 4, 2)[:2]
    for first, second in zip(cell(list(inputs)), layer(list(inputs)), strict=True):
        assert abs(first.numpy() - second.numpy()).max() < 1e-6


def test_timing_and_kernel_on_this_machine():
    model = build_pair("shared_layer", units=4, rows=3, features=2)
    timing = time_pair(model, pair_inputs(2, 3, 2), Timing(warmup=1, repeats=3))
    assert timing.repeats == 3 and 0 < timing.p10_s <= timing.median_s <= timing.p90_s
    assert timing.kernel in ("cudnn", "generic")


def test_unknown_form_is_one_sentence():
    with pytest.raises(ValueError, match="form must be one of shared_cell, shared_layer"):
        build_pair("shared_everything", units=4, rows=3, features=2)
