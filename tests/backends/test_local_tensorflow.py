"""The in-process API inside a TensorFlow process: the harness's run behind the same surface
as JAX's and PyTorch's, and the record it makes."""

import numpy as np
import pytest

from hierlstm.backends import current, local
from hierlstm.config import RunConfig, SettingError
from hierlstm.i18n import MESSAGES
from hierlstm.timing.summary import run_result

TINY = RunConfig(batch_size=2, time_steps=3, height=6, filters=2, inner_units=3, outer_units=4)


@pytest.mark.parametrize("task", ["inference", "training"])
def test_a_tensorflow_run_has_the_surface_of_the_others(task):
    assert current() == "tensorflow"
    run = local.prepare(TINY.replace(task=task), seed=0)
    assert run.backend == "tensorflow" and run.config.task == task
    assert run.description.startswith("/CPU:0 (") and run.first_call_s > 0
    assert run.kernel == "generic"
    assert run.kernel_reason in {entry["en"] for entry in MESSAGES.values()}
    samples = [run.sample() for _ in range(3)]
    phases = {}
    if task == "training":
        assert set(samples[0]) == {"step", "forward", "forward_backward", "update"}
        phases = {name: [s[name] for s in samples] for name in samples[0] if name != "step"}
    else:
        assert set(samples[0]) == {"step"}
    steps = [sample["step"] for sample in samples]
    result = run_result(run, steps, 2, 7, "cpu_rss_growth", phases)
    assert result.step.median == pytest.approx(float(np.median(steps)))
    assert result.step.samples == pytest.approx(steps)
    assert (result.repeats, result.warmup, result.peak_memory_bytes) == (3, 2, 7)
    assert result.trace_count == 1 == run.trace_count  # traced once, before the first call
    assert result.versions["tensorflow"] and result.device == run.description


def test_a_variant_another_backend_cannot_build_is_fine_here():
    run = local.prepare(TINY.replace(variant="fused"), seed=0)
    assert run.sample()["step"] > 0


def test_a_config_for_another_backend_is_refused():
    with pytest.raises(SettingError, match="^backend jax was asked for; this process's backend"):
        local.prepare(TINY.replace(backend="jax"), seed=0)
