"""The command line's grammar: every command and flag (`build_parser`); the flags' text is read
into settings by `hierlstm.cli.flags`."""

from __future__ import annotations

import argparse

from hierlstm.cli.flags import LEARN_FLAGS, LEARN_TIME_STEPS, UsageError
from hierlstm.config import BOUNDS, DEFAULT_TIMING, SIZE_FIELDS, RunConfig

# `whatif --sound`'s names: hierlstm.inside.sounds.SOUNDS, written out so that parsing imports
# no numpy (tests/cli/test_cli_whatif.py keeps the two the same)
WHATIF_SOUNDS = "rising | falling | tones | noise | silence"
CHECK_SIZES = {"batch_size": 4, "time_steps": 10}  # `check`'s sizes unless given


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _add_sizes(parser, names=SIZE_FIELDS, **defaults):
    """A flag per RunConfig size (--time-steps N ...), named as its field; `defaults` are the
    command's own where they are not RunConfig's."""
    for name in names:
        low, high = BOUNDS[name]
        default = defaults.get(name, getattr(RunConfig(), name))
        parser.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            metavar="N",
            help=f"the model's {name}, {low} to {high} (default {default})",
        )


def _add_geometry(parser, *, variant: bool, **defaults):
    if variant:
        parser.add_argument("--variant", required=True, help="a name from `variants`")
    _add_sizes(parser, **defaults)
    parser.add_argument("--precision", help="float32 | mixed_float16 | mixed_bfloat16")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


DESCRIPTION = "Build, trace, time and profile a hierarchical LSTM, and keep the results."
_TIMING_WORDS = {
    "repeats": "timed samples of each variant",
    "warmup": "untimed calls after the first call",
    "seed": "makes the input and the parameters",
}


def _timing_help(name: str) -> str:
    low, high = BOUNDS[name]
    return f"{_TIMING_WORDS[name]}, {low} to {high}"


def build_parser() -> Parser:
    parser = Parser(prog="python -m hierlstm", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = commands.add_parser("variants", help="list the six variants of the model")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a list")
    trace = commands.add_parser("trace", help="every shape through one variant")
    _add_geometry(trace, variant=True)
    _add_strategy(trace)
    check = commands.add_parser("check", help="every variant against the numpy reference")
    _add_geometry(check, variant=False, **CHECK_SIZES)
    check.add_argument("--seed", default="0", metavar="N", help=_timing_help("seed"))
    _add_backend(check)
    check.add_argument("--xla", action="store_true", help="compile each variant with XLA")
    check.add_argument(
        "--task",
        help="inference (outputs, the default) | training (gradients of the training loss)",
    )

    learn = commands.add_parser(
        "inside",
        aliases=["learn"],  # its name before the feature had one name (scripts may use it)
        help="inside the tensors: train the model to name the sound playing at every time step",
    )
    learn.set_defaults(command="inside")  # whichever name was typed
    sizes = [name for name in SIZE_FIELDS if name != "batch_size"]  # it has --batch
    _add_sizes(learn, sizes, time_steps=LEARN_TIME_STEPS)
    for flag, help_text in LEARN_FLAGS.items():
        learn.add_argument(f"--{flag}", metavar="N", help=help_text)
    learn.add_argument("--json", action="store_true", help="print JSON instead of a table")

    _add_whatif(commands)

    bench = commands.add_parser("bench", help="time variants side by side (interleaved)")
    _add_run_options(bench)
    sweep = commands.add_parser("sweep", help="time variants over time steps or batch sizes")
    _add_run_options(sweep)
    sweep.add_argument("--axis", required=True, help="time_steps | batch_size")
    sweep.add_argument("--values", required=True, help="comma-separated, e.g. 25,50,100")
    sweep.add_argument("--csv", metavar="FILE", help="write the sweep table as CSV to FILE")
    sweep.add_argument(
        "--shard",
        metavar="I/N",
        help="run only values I, I+N, I+2N, ... (0 <= I < N): N machines share one sweep",
    )
    worker = commands.add_parser(
        "worker", help="one member of a multi-worker run (MultiWorkerMirroredStrategy)"
    )
    _add_run_options(worker, strategy=False)
    worker.add_argument(
        "--cluster",
        required=True,
        metavar="HOST:PORT,...",
        help="every worker's address, the same list and order on every worker",
    )
    worker.add_argument("--task-index", required=True, metavar="I", help="this worker's place")
    _add_trusted_network(worker)

    profiled = commands.add_parser(
        "profile",
        help="where one step's time goes: one variant under its backend's profiler "
        "(TensorFlow's, JAX's or PyTorch's)",
    )
    _add_profile_options(profiled)

    doctor = commands.add_parser(
        "doctor", help="whether the GPUs work with this TensorFlow, and what to do if not"
    )
    doctor.add_argument("--json", action="store_true", help="print JSON instead of a report")
    doctor.add_argument(
        "--no-probe",
        dest="no_probe",
        action="store_true",
        help="only the report and the diagnosis, no live probe on each device",
    )

    served = commands.add_parser(
        "app",
        help="serve the app (streamlit run app.py); every flag after it is passed to streamlit",
        description="Serve hierlstm's app with `streamlit run`. Every argument after `app` goes "
        "to streamlit as given, e.g. `app --server.port 8600 --server.headless true`.",
    )
    served.add_argument(
        "streamlit_flags",
        nargs="*",
        metavar="STREAMLIT_FLAG",
        help="passed to `streamlit run` as given",
    )

    _add_yours(commands)
    _add_export(commands)
    results = commands.add_parser("results", help="stored measurements")
    actions = results.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="stored runs, newest first")
    _add_db(listing)
    listing.add_argument("--variant", help="only this variant's runs")
    listing.add_argument("--device", help="only the runs on this device, as stored (e.g. /CPU:0)")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    export = actions.add_parser("export", help="write every stored run as CSV or JSON")
    _add_db(export)
    export.add_argument("--format", default="csv", help="csv | json")
    export.add_argument("--output", metavar="FILE", help="default: standard output")
    imported = actions.add_parser("import", help="add runs from a CSV or JSON export")
    _add_db(imported)
    imported.add_argument("file", metavar="FILE", help="a CSV or JSON file of `results export`")
    checked = actions.add_parser(
        "check", help="SQLite's integrity check of the results file, and the rows still readable"
    )
    _add_db(checked)
    recovered = actions.add_parser(
        "recover",
        help="keep a damaged results file renamed with a timestamp and start a new one beside it",
    )
    _add_db(recovered)
    diff = actions.add_parser(
        "diff",
        help="run B against run A: changed settings, median ratio B/A with its interval, verdict",
    )
    _add_db(diff)
    diff.add_argument("id_a", metavar="ID_A", help="the reference run (an id or its start)")
    diff.add_argument("id_b", metavar="ID_B", help="the run compared with it")
    diff.add_argument("--json", action="store_true", help="print JSON instead of a report")
    return parser


def _add_whatif(commands):
    whatif = commands.add_parser(
        "whatif",
        help="inside the tensors: what if a gate, a state or the input were changed? The model "
        "untouched and under interventions, every layer's largest change, checked against the "
        "numpy oracle",
        description="Run the model on a built-in sound, untouched and under interventions, in "
        "TensorFlow and in the numpy oracle: each intervention replaces a value where it is "
        "computed, and every later equation reads it. Every --at places every intervention.",
    )
    sizes = [name for name in SIZE_FIELDS if name != "batch_size"]  # one sound: batch 1
    _add_sizes(whatif, sizes, time_steps=LEARN_TIME_STEPS)
    whatif.add_argument(
        "--sound", metavar="NAME", help=f"the input: {WHATIF_SOUNDS} (default rising)"
    )
    whatif.add_argument(
        "--clamp",
        action="append",
        metavar="LSTM.GATE=VALUE",
        help="clamp a gate where it is computed: LSTM inner | outer, GATE i | f | g | o, VALUE "
        "0 to 1 (g: -1 to 1), e.g. outer.f=0",
    )
    whatif.add_argument(
        "--set",
        action="append",
        metavar="LSTM.STATE=VALUE",
        help="set a state where it is computed: STATE c | h, VALUE for h -1 to 1, for c -100 to "
        "100, e.g. inner.c=0",
    )
    whatif.add_argument(
        "--silence",
        action="append",
        metavar="channel=N|height=A:B",
        help="silence a conv channel, or a band of the input's height (frequency bands A to B-1)",
    )
    whatif.add_argument(
        "--switch", metavar="SOUND", help="the input becomes SOUND over --at t (t=10: from 10 on)"
    )
    whatif.add_argument(
        "--at",
        action="append",
        metavar="t=A:B|s=A:B",
        help="where every intervention applies: outer time steps t, inner steps s, as Python "
        "slices (end exclusive, either end open); each at most once (default: every step)",
    )
    whatif.add_argument(
        "--trained",
        action="store_true",
        help="train the model on the sounds task first (as `inside` does), then show its "
        "prediction at every time step, untouched and under the interventions",
    )
    whatif.add_argument("--steps", metavar="N", help="training steps with --trained (default 100)")
    whatif.add_argument("--seed", metavar="N", help=LEARN_FLAGS["seed"])
    whatif.add_argument("--json", action="store_true", help="print JSON instead of a report")


def _add_yours(commands):
    audit = commands.add_parser(
        "yours",
        aliases=["audit"],  # its name before the feature had one name (scripts may use it)
        help="your own Keras model: every recurrent layer's kernel per backend, and why",
        description="Trace a .keras (or Keras .h5) file, loaded with safe_mode=True and "
        "compile=False; say for every LSTM, GRU, SimpleRNN and RNN(cell) whether a GPU runs it "
        "on cuDNN or on the generic loop, per Keras backend, and why; check that on the graph "
        "TensorFlow traces for a GPU; rewrite what can be rewritten without changing the model.",
    )
    audit.set_defaults(command="yours")  # whichever name was typed
    audit.add_argument("model", metavar="MODEL", help="a .keras or Keras .h5 file")
    audit.add_argument(
        "--size",
        action="append",
        metavar="NAME=N",
        help="a size for a None dimension of the inputs, repeatable: batch (axis 0), time (an "
        "input's only other None axis), axisN otherwise, prefixed by the input's name when "
        "the model has several (e.g. --size batch=8 --size time=50); default batch=2, time=8, "
        "others 4",
    )
    audit.add_argument(
        "--backend",
        action="append",
        metavar="NAME",
        help="tensorflow | jax | torch: the backends shown, repeatable (default: all three; the "
        "audit needs none of them installed but TensorFlow)",
    )
    audit.add_argument(
        "--jit-compile", action="store_true", help="TensorFlow runs it under XLA (jit_compile=True)"
    )
    audit.add_argument(
        "--torch-compile", action="store_true", help="PyTorch runs it under torch.compile"
    )
    audit.add_argument("--json", action="store_true", help="print JSON instead of tables")
    audit.add_argument(
        "--rewrite", metavar="OUT", help="save the rewritten model here (a .keras file)"
    )
    audit.add_argument(
        "--bench",
        action="store_true",
        help="time the original and the rewrite side by side: forward and a training step",
    )
    audit.add_argument("--repeats", metavar="N", help="timed rounds of --bench (default 5)")
    audit.add_argument(
        "--no-store", action="store_true", help="do not store the --bench run in the results file"
    )
    _add_db(audit)


EXPORT_FORMATS = ("onnx",)


def _add_export(commands):
    exported = commands.add_parser(
        "export",
        help="write one variant as an ONNX file, checked against the numpy reference",
        description="Build the variant from init_params(seed), convert it with tf2onnx (the "
        "converter Keras's model.export(format='onnx') uses on TensorFlow) at a fixed input "
        "shape, and write the file once it computes the numpy reference's outputs (within 1e-5).",
    )
    exported.add_argument("--variant", required=True, help="a name from `variants`")
    _add_sizes(exported)
    exported.add_argument("--seed", default="0", metavar="N", help=_timing_help("seed"))
    exported.add_argument("--format", default="onnx", help="onnx (the only format, the default)")
    exported.add_argument("--json", action="store_true", help="print JSON instead of a line")
    exported.add_argument("out", metavar="OUT", help="the file to write, e.g. folded.onnx")


def _add_backend(parser):
    parser.add_argument(
        "--backend",
        action="append",
        metavar="NAME",
        help="tensorflow (the default) | jax | torch: the Keras backend, or onnxruntime | "
        "openvino: the inference runtime, each in its own process; repeat to run every variant "
        "on each",
    )


def _add_db(parser):
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="results file (default: $HIERLSTM_DB or the user data directory)",
    )


def _add_strategy(parser):
    parser.add_argument("--strategy", help="none | mirrored | multi_worker (tf.distribute)")
    parser.add_argument(
        "--devices", help="the mirrored replicas, e.g. gpu:0,gpu:1 (default: every GPU)"
    )
    _add_trusted_network(parser)


def _add_trusted_network(parser):
    parser.add_argument(
        "--trusted-network",
        dest="trusted_network",
        action="store_true",
        help="allow worker addresses off this machine: TensorFlow's workers have no "
        "authentication, so every machine that can reach their ports must be yours",
    )


def _add_run_settings(parser):
    """The RunConfig flags of a command that runs one config: sizes, precision, XLA, kernel,
    device, task and optimizer."""
    _add_sizes(parser)
    parser.add_argument("--precision", help="float32 | mixed_float16 | mixed_bfloat16")
    parser.add_argument("--xla", action="store_true", help="compile with XLA (jit_compile)")
    parser.add_argument("--lstm-kernel", dest="lstm_kernel", help="auto | generic")
    parser.add_argument("--device", help="auto | cpu | gpu:N")
    parser.add_argument(
        "--task", help="inference (a forward pass, the default) | training (one training step)"
    )
    parser.add_argument("--optimizer", help="sgd (the default) | adam: a training step's update")


def _add_run_options(parser, *, strategy: bool = True):
    parser.add_argument(
        "--variant", action="append", required=True, help="repeat to time several variants"
    )
    if strategy:  # bench and sweep (not the multi-worker member, TensorFlow's alone)
        _add_strategy(parser)
        _add_backend(parser)
    parser.add_argument(
        "--logical-cpus",
        dest="logical_cpus",
        metavar="N",
        help="split the CPU into N logical devices (cpu:0..cpu:N-1) before TensorFlow starts",
    )
    _add_run_settings(parser)
    for name in ("repeats", "warmup", "seed"):
        parser.add_argument(
            f"--{name}",
            default=str(getattr(DEFAULT_TIMING, name)),
            metavar="N",
            help=_timing_help(name),
        )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_db(parser)
    parser.add_argument("--no-store", action="store_true", help="do not store the results")


def _add_profile_options(parser):
    parser.add_argument("--variant", required=True, help="a name from `variants`")
    _add_run_settings(parser)
    _add_backend(parser)
    low, high = BOUNDS["profile_steps"]
    parser.add_argument(
        "--steps", default="10", metavar="N", help=f"profiled steps, {low} to {high} (default 10)"
    )
    for name in ("warmup", "seed"):
        parser.add_argument(
            f"--{name}",
            default=str(getattr(DEFAULT_TIMING, name)),
            metavar="N",
            help=_timing_help(name),
        )
    parser.add_argument(
        "--repeats",
        default=str(DEFAULT_TIMING.repeats),
        metavar="N",
        help="harness samples timed after the profile, profiler off (its median is shown beside)",
    )
    parser.add_argument(
        "--logdir",
        metavar="DIR",
        help="where the capture goes (default: a new folder under the user data directory's "
        "profiles/); kept, for TensorBoard or XProf",
    )
    parser.add_argument(
        "--trace-json",
        metavar="FILE",
        help="also write the last profiled step as Chrome trace-event JSON (Perfetto, "
        "chrome://tracing)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    _add_db(parser)
    parser.add_argument("--no-store", action="store_true", help="do not store the summary row")
