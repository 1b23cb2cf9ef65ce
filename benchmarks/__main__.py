"""`python -m benchmarks`: the benchmarks, one line each; `python -m benchmarks NAME [args]` runs
one; `--all` runs, each in its own process, every one this machine can run without arguments.
`--save` keeps each run (`benchmarks.record`), `--save-as LABEL` one run beside the newest;
`--results` writes RESULTS.md from the kept runs.
`make bench` is `--all --save`, then `--results`."""

from __future__ import annotations

import subprocess
import sys

from benchmarks.record import run_and_save, write_results
from benchmarks.registry import BENCHMARKS, SUMMARIES


def listing() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["usage: python -m benchmarks NAME [args]   (NAME --help for its options)"]
    lines += ["       python -m benchmarks --all        (every one this machine can run)"]
    lines += ["       ... --save                        (each run kept in benchmarks/results/)"]
    lines += [
        "       NAME [args] --save-as LABEL       (kept beside the newest run, as NAME.LABEL)"
    ]
    lines += ["       python -m benchmarks --results    (RESULTS.md from the kept runs)", ""]
    for benchmark in BENCHMARKS.values():
        needs = f" (needs {benchmark.needs})" if benchmark.needs else ""
        lines.append(f"  {benchmark.name:<{width}}  {benchmark.summary}{needs}")
    return "\n".join(lines)


def run_all(save: bool) -> int:
    """Each benchmark whose needs are met, with its defaults (each run kept with `save`); 1 if
    any of them failed."""
    failed = []
    for benchmark in BENCHMARKS.values():
        if missing := benchmark.unmet():
            print(f"benchmarks: {benchmark.name} left out: needs {missing}", file=sys.stderr)
            continue
        print(f"benchmarks: {benchmark.name}", file=sys.stderr, flush=True)
        command = [sys.executable, "-m", benchmark.module]
        if run_and_save(benchmark.name, []) if save else subprocess.run(command).returncode:
            failed.append(benchmark.name)
    if failed:
        print(f"benchmarks: failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(listing())
        return 0
    save = "--save" in argv
    argv = [word for word in argv if word != "--save"]
    label = ""
    if "--save-as" in argv:
        at = argv.index("--save-as")
        label = argv[at + 1] if at + 1 < len(argv) else ""
        if not label.isidentifier():
            print("error: --save-as needs a label of letters, digits and _", file=sys.stderr)
            return 2
        argv = argv[:at] + argv[at + 2 :]
        save = True
    if argv == ["--results"]:
        print(f"wrote {write_results(SUMMARIES)}", file=sys.stderr)
        return 0
    if argv == ["--all"]:
        return run_all(save)
    name, *rest = argv
    if name not in BENCHMARKS:
        print(
            f"error: no benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}", file=sys.stderr
        )
        return 2
    if save:
        return run_and_save(name, rest, label=label)
    BENCHMARKS[name](rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
