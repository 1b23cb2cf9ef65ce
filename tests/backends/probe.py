"""What one backend's fresh process reports to the tests of tests/backends, in one run (JAX's
compilations make a process per test too slow): the oracles of every portable variant, a
perturbed parameter that must fail them, the parameter names, the refusals, a timed inference
and training run, what the kernel readers saw, and which frameworks ended up imported.

Run as `report(probe.main())` by `in_backend.run_in_backend`; it imports the TensorFlow-free
layers first, so `"tensorflow" in sys.modules` at the end says whether any of them imported it.
"""

import sys

import numpy as np

import hierlstm.config
import hierlstm.registry
import hierlstm.results  # noqa: F401 (imported: it must not import TensorFlow)
from hierlstm.backends import BACKENDS, current, kernels, local, missing
from hierlstm.model import builders
from hierlstm.model.check import TOLERANCES, random_input, run_variant
from hierlstm.model.gradcheck import gradient_problem, judge, variant_gradients
from hierlstm.model.params import init_params, read_params
from hierlstm.model.reference import reference_forward
from hierlstm.records import PHASES
from hierlstm.timing.summary import run_result

TINY = hierlstm.config.RunConfig(
    batch_size=2, time_steps=3, height=6, filters=2, inner_units=3, outer_units=4, backend=current()
)


def negative_case() -> dict:
    """folded with every inner bias moved by 0.01: its output and gradients against the
    oracles of the unmoved parameters."""
    config = TINY.replace(variant="folded")
    params = init_params(config)
    moved = {**params, "inner_bias": params["inner_bias"] + 0.01}
    x = random_input(config)
    expected = reference_forward(params, x, pool_height=config.pool_height)
    forward_diff = float(np.max(np.abs(run_variant(config, moved, x) - expected)))
    problem = gradient_problem(config)
    gradients = variant_gradients(config, moved, problem.inputs, problem.target)
    verdict = judge("folded", gradients, problem, gradients, "folded")
    return {
        "forward_diff": forward_diff,
        "tolerance": TOLERANCES["float32"],
        "gradient_ok": verdict.ok,
        "gradient_error": verdict.worst_error,
    }


def parameters() -> dict:
    """Every portable variant's weight paths, and whether one parameter set loads and reads
    back unchanged."""
    found = {}
    for name, variant in hierlstm.registry.VARIANTS.items():
        if current() not in variant.backends:
            continue
        config = TINY.replace(variant=name)
        params = init_params(config)
        model = builders.build_model(config, params)
        back = read_params(model)
        found[name] = {
            "paths": sorted(weight.path for weight in model.weights),
            "round_trip": all(np.array_equal(back[key], params[key]) for key in params),
        }
    return found


def refusals() -> dict:
    """The one sentence of each refusal: a config for TensorFlow (at `prepare`, and at `check`),
    xla (refused on torch only), fused for this backend (by the config) and fused's config for
    TensorFlow built here (by `build_model`)."""
    found = {}
    attempts = {
        "other_backend": lambda: local.prepare(TINY.replace(backend="tensorflow"), seed=0),
        "check_other_backend": lambda: local.check(TINY.replace(backend="tensorflow")),
        "xla": lambda: local.prepare(TINY.replace(xla=True), seed=0),
        "fused_config": lambda: TINY.replace(variant="fused"),
        "fused_build": lambda: builders.build_model(
            TINY.replace(variant="fused", backend="tensorflow")
        ),
    }
    for key, attempt in attempts.items():
        try:
            attempt()
            found[key] = ""
        except hierlstm.config.SettingError as error:
            found[key] = str(error)
    return found


def timed_runs() -> dict:
    found = {}
    for task in ("inference", "training"):
        run = local.prepare(TINY.replace(variant="folded", task=task), seed=0)
        samples = [run.sample() for _ in range(3)]
        phases = {
            name: [sample[name] for sample in samples] for name in PHASES if task == "training"
        }
        steps = [sample["step"] for sample in samples]
        result = run_result(run, steps, 1, 123, "cpu_rss_growth", phases)
        found[task] = {
            "samples": samples,
            "record": {
                key: value
                for key, value in result.to_dict().items()
                if key not in ("config",) and isinstance(value, (int, float, str, dict))
            },
            "device": run.description,
            "first_call_s": run.first_call_s,
            "trace_count_after": run.trace_count,
            "kernels": kernel_evidence(run),
        }
    return found


def kernel_evidence(run) -> dict:
    """What the kernel reader saw in a timed run of folded (its LSTMs keras.layers.LSTM)."""
    training = run.config.task == "training"
    if current() == "jax":
        return {
            "calls": kernels.jax_cudnn_calls(run.evidence),
            "has_while": "stablehlo.while" in run.evidence,
            "ran": kernels.ran_cudnn_jax(run.evidence, training),
        }
    names = set(run.evidence.split("\n"))
    return {
        "ran": kernels.ran_cudnn_torch(names, training),
        "cudnn_ops": sorted(name for name in names if "cudnn" in name),
        "has_sigmoid": "aten::sigmoid" in names,
        "has_backward": any("Backward" in name for name in names),
    }


def main() -> dict:
    absent = {name: missing(name) for name in BACKENDS}
    report = {
        "backend": current(),
        "check": local.check(TINY),
        "negative": negative_case(),
        "parameters": parameters(),
        "refusals": refusals(),
        "runs": timed_runs(),
        "missing": absent,
    }
    # Keras itself imports jax whenever it is installed, whatever the backend; torch it does not
    report["imported"] = {name: name in sys.modules for name in ("tensorflow", "torch")}
    return report
