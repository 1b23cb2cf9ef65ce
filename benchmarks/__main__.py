"""`python -m benchmarks`: the benchmarks, one line each; `python -m benchmarks NAME [args]`
runs one (the same as `python -m benchmarks.NAME [args]`)."""

from __future__ import annotations

import sys

from benchmarks.registry import BENCHMARKS


def listing() -> str:
    width = max(map(len, BENCHMARKS))
    lines = ["usage: python -m benchmarks NAME [args]   (NAME --help for its options)", ""]
    for benchmark in BENCHMARKS.values():
        needs = f" (needs {benchmark.needs})" if benchmark.needs else ""
        lines.append(f"  {benchmark.name:<{width}}  {benchmark.summary}{needs}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(listing())
        return 0
    name, *rest = argv
    if name not in BENCHMARKS:
        print(
            f"error: no benchmark {name!r}; choose one of {', '.join(BENCHMARKS)}", file=sys.stderr
        )
        return 2
    BENCHMARKS[name](rest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
