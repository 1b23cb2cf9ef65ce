"""`python -m hierlstm ...`: parse and check the settings, import TensorFlow and start its devices
when a command needs them, and dispatch. A bad argument or a refused file is one `error:` line and
exit 2, before TensorFlow is imported; a result the store refuses is printed, then its line, exit
1."""

from __future__ import annotations

import sys

from hierlstm.cli.backends import IN_WORKERS, in_workers
from hierlstm.cli.commands import (
    check_config,
    cmd_check,
    cmd_inside,
    cmd_results,
    cmd_trace,
    cmd_variants,
)
from hierlstm.cli.doctor import cmd_doctor
from hierlstm.cli.export import cmd_export, export_settings
from hierlstm.cli.flags import (
    UsageError,
    config_from_args,
    inside_settings,
    seed_number,
    usage,
    whole_number,
)
from hierlstm.cli.parser import build_parser
from hierlstm.cli.profile import cmd_profile, profile_settings
from hierlstm.cli.serve import serve
from hierlstm.cli.timing import cmd_bench, cmd_sweep, cmd_worker, run_settings, sweep_values
from hierlstm.cli.whatif import cmd_whatif, whatif_settings
from hierlstm.cli.yours import cmd_yours, yours_settings
from hierlstm.config import SettingError
from hierlstm.refusals import Refused
from hierlstm.settings import check_environment

COMMANDS = {
    "variants": cmd_variants,
    "trace": cmd_trace,
    "check": cmd_check,
    "inside": cmd_inside,
    "whatif": cmd_whatif,
    "bench": cmd_bench,
    "sweep": cmd_sweep,
    "worker": cmd_worker,
    "profile": cmd_profile,
    "doctor": cmd_doctor,
    "app": lambda args: serve(args.streamlit_flags),  # main() serves it before parsing
    "results": cmd_results,
    "yours": cmd_yours,
    "export": cmd_export,
}
# What each command checks before TensorFlow is imported (the same functions it calls itself).
SETTINGS = {
    "trace": config_from_args,
    "check": lambda args: (check_config(args), seed_number(args.seed)),
    "inside": inside_settings,
    "whatif": whatif_settings,
    "bench": run_settings,
    "sweep": lambda args: (run_settings(args), sweep_values(args)),
    "worker": run_settings,
    "profile": profile_settings,
    "yours": yours_settings,
    "export": export_settings,
    "doctor": lambda args: None,  # no settings of its own; HIERLSTM_GPU_MEMORY_MB as for all
}


def _logical_cpus(args) -> int | None:
    text = getattr(args, "logical_cpus", None)
    return None if text is None else whole_number("--logical-cpus", text, 1, 64)


def _join_cluster(args) -> None:
    """TF_CONFIG for this worker, from --cluster and --task-index (read when the strategy is
    made, right after TensorFlow's import); then, for a worker or `--strategy multi_worker`, the
    cluster refused off this machine without --trusted-network, before TensorFlow is imported."""
    from hierlstm.distributed import parse_cluster, require_trusted_network, set_cluster

    with usage():
        if args.command == "worker":
            addresses = parse_cluster(args.cluster)
            last = len(addresses) - 1
            set_cluster(addresses, whole_number("--task-index", args.task_index, 0, last))
        if args.command == "worker" or getattr(args, "strategy", None) == "multi_worker":
            require_trusted_network(args.trusted_network)


def _start_devices(args, logical_cpus: int | None) -> None:
    """What must happen before TensorFlow's runtime starts: GPU memory growth (or the
    HIERLSTM_GPU_MEMORY_MB limit), so the app and other commands can share the GPU; the
    logical CPUs; then the multi-worker strategy (it configures collective ops, which only a
    fresh runtime allows)."""
    from hierlstm.distributed import cluster, distribute
    from hierlstm.hardware import gpu

    with usage(RuntimeError, SettingError):
        gpu.configure_memory()
        if logical_cpus:
            cluster.ensure_logical_cpus(logical_cpus)
        if args.command == "worker" or getattr(args, "strategy", None) == "multi_worker":
            distribute.multi_worker_strategy()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["app"] and argv[1:2] not in (["-h"], ["--help"]):
        return serve(argv[1:])  # every flag is Streamlit's, passed on unparsed
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError(f"choose a command: {', '.join(COMMANDS)} (see --help).")
        with usage():  # every HIERLSTM_* variable, before anything reads one
            check_environment()
        logical_cpus = _logical_cpus(args)
        _join_cluster(args)
        if args.command not in SETTINGS:  # variants, results: no TensorFlow at all
            return COMMANDS[args.command](args)
        SETTINGS[args.command](args)
        if in_workers(args):  # another Keras backend: its own process; TensorFlow not here
            return IN_WORKERS[args.command](args)
        from hierlstm._native import import_tensorflow_quietly

        tensorflow = import_tensorflow_quietly()
        tensorflow.get_logger().setLevel("ERROR")  # one trace per variant is intended, not a leak
        _start_devices(args, logical_cpus)
        return COMMANDS[args.command](args)
    except (UsageError, Refused) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
