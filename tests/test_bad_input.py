"""Bad input through every entry point: `RunConfig` (with the server limits), the CLI, URL
parameters and import files. One table of cases; for each, the user gets one line naming the
problem (no traceback) and the results store, seeded with real rows, is left exactly as it was.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from factories import make_result

from hierlstm.admission import check_limits
from hierlstm.app import runs, state
from hierlstm.cli.main import main
from hierlstm.config import PRECISIONS, RunConfig
from hierlstm.hardware import precision_supported
from hierlstm.i18n import t
from hierlstm.records import CONFIG_COLUMNS
from hierlstm.registry import VARIANTS
from hierlstm.results.exchange import MAX_IMPORT_BYTES
from hierlstm.results.schema import COLUMNS
from hierlstm.results.store import ResultStore

LIMITS = (
    "MAX_BATCH",
    "MAX_TIME_STEPS",
    "MEMORY_BUDGET_MB",
    "TRACE_BUDGET_STEPS",
    "CONFIRM_SECONDS",
)
LIMIT_VARIABLES = [f"HIERLSTM_{name}" for name in LIMITS]
SMALL_BUDGET = ("HIERLSTM_MEMORY_BUDGET_MB", "64")  # batch 1024 x time 2000 needs far more
FIFTY_MB = 50 * 2**20
ONE_OF_VARIANTS = f"variant must be one of {', '.join(VARIANTS)}"
ONE_OF_PRECISIONS = f"precision must be one of {', '.join(PRECISIONS)}"
OVERSIZE = f"the input is 50.0 MB, over the {MAX_IMPORT_BYTES / 2**20:.0f} MB limit"


# ---- stored rows and import files ------------------------------------------------------------


def rows_from_elsewhere(directory: Path) -> list[dict]:
    """Three valid exported rows, none of them in the seeded store (so a good row that slipped
    through an import would show)."""
    store = ResultStore(directory / "elsewhere.sqlite3")
    for batch_size in (2, 4, 8):
        store.add(make_result(config_changes={"batch_size": batch_size}))
    return json.loads(store.export_json())["rows"]


def as_json(rows: list[dict]) -> bytes:
    return json.dumps({"format": "hierlstm-results", "version": 2, "rows": rows}).encode()


def as_csv(rows: list[dict], columns=COLUMNS) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow("" if row[column] is None else row[column] for column in columns)
    return buffer.getvalue().encode()


def spoil(index: int, config: Mapping | None = None, **fields) -> Callable:
    """rows -> the same rows with row `index` (from 0) changed; `config` names RunConfig
    fields, which a row holds in their columns."""

    def change(rows):
        rows[index].update(fields)
        rows[index].update({CONFIG_COLUMNS[name]: value for name, value in (config or {}).items()})
        return rows

    return change


def json_file(change: Callable = lambda rows: rows) -> Callable:
    return lambda rows: as_json(change(rows))


def csv_file(change: Callable = lambda rows: rows) -> Callable:
    return lambda rows: as_csv(change(rows))


def padded_to_50_mb(rows: list[dict]) -> bytes:
    """A valid export padded with spaces to 50 MB: only its size is wrong."""
    document = as_json(rows)
    return document + b" " * (FIFTY_MB - len(document))


def with_extra_field(rows: list[dict]) -> bytes:
    header, first, *rest = as_csv(rows).decode().splitlines()
    return "\n".join([header, first + ",surplus", *rest]).encode()


# ---- the cases: {id: (what is given, a part of the one-line message the user gets)} ------------
# config and url: {name: text}; cli: argv ("{db}": the seeded store, "{file}": CLI_FILES' file);
# import: (format, rows -> bytes). A case whose id ends "memory-budget" runs under SMALL_BUDGET.
# One setting's bounds are tests/test_config.py's; one URL parameter's, tests/app/test_query.py's.

CONFIG_CASES = {
    "negative-height": ({"height": "-36"}, "height must be between 1 and 4096; got -36."),
    "height-below-pool": (
        {"height": "12", "pool_height": "24"},
        "height must be at least pool_height (24) so the pooled height is at least 1; got 12.",
    ),
    "unknown-variant": ({"variant": "fastest"}, f"{ONE_OF_VARIANTS}; got 'fastest'."),
    "unknown-precision": ({"precision": "float16"}, f"{ONE_OF_PRECISIONS}; got 'float16'."),
    "batch-over-server-limit": (
        {"batch_size": "2048"},
        "batch_size 2048 is over this server's limit of 1024 (HIERLSTM_MAX_BATCH).",
    ),
    "time-over-server-limit": (
        {"time_steps": "5000"},
        "time_steps 5000 is over this server's limit of 2000",
    ),
    "time-distributed-over-trace-budget": (
        {"variant": "time_distributed", "time_steps": "201"},
        "time_distributed would unroll 201 inner LSTM calls into one graph, an estimated 40 s of "
        "tracing, over the trace budget of 200 calls (HIERLSTM_TRACE_BUDGET_STEPS); use folded",
    ),
    "over-memory-budget": (
        {"batch_size": "1024", "time_steps": "2000"},
        "MB of activations, over the budget of 64 MB (HIERLSTM_MEMORY_BUDGET_MB)",
    ),
    "unknown-task": ({"task": "fit"}, "task must be one of inference, training"),
    "unknown-optimizer": (
        {"task": "training", "optimizer": "rmsprop"},
        "optimizer must be one of sgd, adam; got 'rmsprop'.",
    ),
    "training-under-a-strategy": (
        {"task": "training", "strategy": "mirrored"},
        "task training times one step on one device; strategy must be none",
    ),
    "training-over-memory-budget": (
        {"task": "training", "batch_size": "32", "time_steps": "100"},  # inference would fit
        "MB for a training step (activations kept for the backward pass, gradients and "
        "optimizer state), over the budget of 64 MB",
    ),
    "time-distributed-training-over-trace-budget": (
        {"task": "training", "variant": "time_distributed", "time_steps": "100"},
        "time_distributed would unroll 100 inner LSTM calls and their gradients into its "
        "training graphs, an estimated 60 s of tracing, over the trace budget of 200 calls "
        "(HIERLSTM_TRACE_BUDGET_STEPS; a training step counts each 3 times)",
    ),
}


def bench(*flags: str) -> list[str]:
    """A tiny bench that would store into the seeded store if it ever ran; `flags` win."""
    small = ["--batch-size", "1", "--time-steps", "2", "--repeats", "1", "--warmup", "0"]
    return ["bench", "--variant", "folded", *small, "--db", "{db}", *flags]


def sweep(*flags: str) -> list[str]:
    small = ["--batch-size", "1", "--repeats", "1", "--warmup", "0", "--db", "{db}"]
    axis = ["--axis", "time_steps", "--values", "2,3"]
    return ["sweep", "--variant", "folded", *axis, *small, *flags]


IMPORT_ARGV = ["results", "import", "{file}", "--db", "{db}"]
# What only the command line does (its limits on bench, sweep and trace, the device, the sweep's
# values, --db, import files): a flag's parsing into RunConfig's messages is the config cases'
# and tests/cli/test_cli.py's BAD_ARGUMENTS.
CLI_CASES = {
    "negative-time-steps": (
        sweep("--axis", "batch_size", "--time-steps", "-5"),
        "time_steps must be between 1 and 100000; got -5.",
    ),
    "huge-batch": (
        bench("--batch-size", "4096"),
        "batch_size 4096 is over this server's limit of 1024",
    ),
    "sweep-to-time-distributed-over-trace-budget": (
        sweep("--variant", "time_distributed", "--values", "10,300"),
        "time_distributed would unroll 300 inner LSTM calls into one graph",
    ),
    "over-memory-budget": (
        bench("--batch-size", "1024", "--time-steps", "2000"),
        "over the budget of 64 MB",
    ),
    # refused before building, not a failed run (and no traceback from the store)
    "missing-gpu": (bench("--device", "gpu:9"), "gpu:9"),
    "trace-time-distributed-over-trace-budget": (
        ["trace", "--variant", "time_distributed", "--time-steps", "500", "--batch-size", "1"],
        "time_distributed would unroll 500 inner LSTM calls into one graph",
    ),
    "non-numeric-sweep-values": (
        sweep("--values", "ten,twenty"),
        "--values must be comma-separated whole numbers",
    ),
    "db-and-no-store": (bench("--no-store"), "--db and --no-store cannot be used together."),
    "import-with-one-bad-row": (
        IMPORT_ARGV,
        "import rejected: row 2: batch_size must be between 1 and 65536; got 0. (1 of 3 rows bad)",
    ),
    "import-50-mb": (IMPORT_ARGV, "import refused: " + OVERSIZE),
    "import-unknown-extension": (IMPORT_ARGV, "name it .csv or .json"),
}
# The file each import case's "{file}" names: (file name, rows -> bytes).
CLI_FILES = {
    "import-with-one-bad-row": ("rows.json", json_file(spoil(1, config={"batch_size": 0}))),
    "import-50-mb": ("rows.json", padded_to_50_mb),
    "import-unknown-extension": ("rows.txt", json_file()),
}

URL_CASES = {
    "huge-batch": (
        {"batch_size": "2048"},
        "batch_size must be between 1 and 1024 in the app; got 2048.",
    ),
    "height-below-pool": (
        {"height": "10", "pool_height": "20"},  # each fine alone, not together
        "height, pool_height=10, 20 ignored, default used: height must be at least pool_height",
    ),
    # Each of these parameters is fine alone and the link opens with them; the Run is refused.
    "time-distributed-over-trace-budget": (
        {"variants": "time_distributed", "time_steps": "500"},
        "Not run: time_distributed would unroll 500 inner LSTM calls into one graph",
    ),
    "over-memory-budget": (
        {"batch_size": "1024", "time_steps": "2000"},
        "Not run: this run needs an estimated",
    ),
}

IMPORT_CASES = {
    "one-bad-row-json": (
        ("json", json_file(spoil(1, config={"batch_size": 0}))),
        "import rejected: row 2: batch_size must be between 1 and 65536; got 0. (1 of 3 rows bad)",
    ),
    "non-numeric-size-csv": (
        ("csv", csv_file(spoil(2, config={"time_steps": "ten"}))),
        "row 3: time_steps must be a whole number; got 'ten'. (1 of 3 rows bad)",
    ),
    "negative-size-csv": (
        ("csv", csv_file(spoil(0, config={"inner_units": -48}))),
        "row 1: inner_units must be between 1 and 2048; got -48.",
    ),
    "height-below-pool": (
        ("json", json_file(spoil(1, config={"height": 2}))),
        "row 2: height must be at least pool_height (3)",
    ),
    "unknown-variant": (
        ("json", json_file(spoil(0, variant="fastest", config={"variant": "fastest"}))),
        f"row 1: {ONE_OF_VARIANTS}; got 'fastest'.",
    ),
    "unknown-precision": (
        ("csv", csv_file(spoil(1, config={"precision": "float8"}))),
        f"row 2: {ONE_OF_PRECISIONS}; got 'float8'.",
    ),
    "non-numeric-time": (
        ("json", json_file(spoil(2, median_s="fast"))),
        "row 3: median_s must be a number; got 'fast'.",
    ),
    "non-numeric-time-csv": (
        ("csv", csv_file(spoil(2, median_s="fast"))),
        "row 3: median_s must be a number; got 'fast'. (1 of 3 rows bad)",
    ),
    "malformed-json": (
        ("json", lambda rows: as_json(rows)[:-20]),
        "import rejected: unreadable JSON",
    ),
    "csv-missing-columns": (
        ("csv", lambda rows: as_csv(rows, [c for c in COLUMNS if c not in ("median_s", "p90_s")])),
        "import rejected: the CSV header lacks median_s, p90_s.",
    ),
    "csv-row-with-extra-field": (
        ("csv", with_extra_field),
        "row 1: has a different number of fields from the header.",
    ),
    "50-mb": (("json", padded_to_50_mb), "import refused: " + OVERSIZE),
    "training-row-without-its-phases": (
        ("json", json_file(spoil(1, config={"task": "training"}))),
        "row 2: forward_median_s must be a number when status is ok; got None.",
    ),
    "unknown-optimizer": (
        ("csv", csv_file(spoil(0, config={"optimizer": "lbfgs"}))),
        "row 1: optimizer must be one of sgd, adam; got 'lbfgs'.",
    ),
}

ENTRIES = {"config": CONFIG_CASES, "cli": CLI_CASES, "url": URL_CASES, "import": IMPORT_CASES}
CASES = [(entry, id, *case) for entry, cases in ENTRIES.items() for id, case in cases.items()]


# ---- how each entry point gives its message ---------------------------------------------------


def config_message(settings: Mapping[str, str]) -> str:
    try:
        check_limits(RunConfig.from_strings(settings))
    except ValueError as error:
        return str(error)
    return ""


def cli_message(argv: list[str], capsys) -> str:
    status = main(argv)
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("error: ") and err.endswith("\n")
    return err.removesuffix("\n")


def url_message(params: Mapping[str, str]) -> str:
    """The line the app shows for a link: the rejected parameter's warning (the default kept),
    or, if every parameter was taken, why Run refuses the link's settings."""
    values, problems = state.read_query(params)
    if problems:
        assert len(problems) == 1
        name, raw, reason = problems[0]
        assert not set(name.split(", ")) & set(values)  # the default is kept
        return t("url.rejected", "en", name=name, value=raw, reason=reason)
    settings = {name: values[name] for name in state.CONFIG_FIELDS if name in values}
    variants = values.get("variants", state.DEFAULT_VARIANTS)
    return runs.run_problem([RunConfig(variant=name, **settings) for name in variants])


def import_message(store: ResultStore, data: bytes, format: str) -> str:
    try:
        store.import_file(data, format=format)
    except ValueError as error:
        return str(error)
    return ""


@pytest.fixture
def default_limits(monkeypatch):
    for name in LIMIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def seeded_store(default_limits, tmp_path, monkeypatch) -> ResultStore:
    """Two real stored rows; $HIERLSTM_DB points here too, so default-path writes would show."""
    store = ResultStore(tmp_path / "results.sqlite3")
    store.add(make_result(), created_at="2025-01-01T10:00:00+00:00")
    store.add(make_result(config_changes={"variant": "nested", "batch_size": 4}))
    monkeypatch.setenv("HIERLSTM_DB", str(store.path))
    return store


def files_in(directory: Path) -> list[str]:
    """Every file, ignoring SQLite's WAL side files (they come and go with connections)."""
    return sorted(
        str(path.relative_to(directory))
        for path in directory.rglob("*")
        if not path.name.endswith(("-wal", "-shm"))
    )


@pytest.mark.parametrize(
    ("entry", "id", "given", "expected"), CASES, ids=[f"{e}-{i}" for e, i, *_ in CASES]
)
def test_bad_input_gives_one_line_and_changes_nothing_stored(
    entry, id, given, expected, seeded_store, tmp_path, monkeypatch, capsys
):
    if id.endswith("memory-budget"):
        monkeypatch.setenv(*SMALL_BUDGET)
    if entry == "cli":
        argv = [part.replace("{db}", str(seeded_store.path)) for part in given]
        if id in CLI_FILES:
            name, contents = CLI_FILES[id]
            path = tmp_path / name
            path.write_bytes(contents(rows_from_elsewhere(tmp_path)))
            argv = [part.replace("{file}", str(path)) for part in argv]
    if entry == "import":
        format, contents = given
        data = contents(rows_from_elsewhere(tmp_path))
    stored, files = seeded_store.export_json(), files_in(tmp_path)
    assert seeded_store.count() == 2

    if entry == "config":
        message = config_message(given)
    elif entry == "cli":
        message = cli_message(argv, capsys)
    elif entry == "url":
        message = url_message(given)
    else:
        message = import_message(seeded_store, data, format)

    assert expected in message
    assert "\n" not in message and "Traceback" not in message
    assert seeded_store.export_json() == stored
    assert files_in(tmp_path) == files  # nor anything written beside it


def test_every_entry_point_has_its_cases():
    assert min(len(cases) for cases in ENTRIES.values()) >= 4 and len(CASES) >= 25
    assert all(id in CLI_CASES and "{file}" in CLI_CASES[id][0] for id in CLI_FILES)


def test_mixed_float16_on_a_cpu_is_allowed_with_a_one_line_warning(default_limits, capsys):
    # Allowed: it runs correctly, only emulated and slower, which the lesson page measures.
    ok, warning = precision_supported("mixed_float16", "cpu")
    assert ok and "float16 on a CPU is emulated and usually slower than float32" in warning
    assert "\n" not in warning
    check_limits(RunConfig.from_strings({"precision": "mixed_float16", "device": "cpu"}))
    values, problems = state.read_query({"precision": "mixed_float16", "device": "cpu"})
    assert problems == [] and values["precision"] == "mixed_float16"
    argv = ["trace", "--variant", "folded", "--precision", "mixed_float16", "--time-steps", "2"]
    assert main([*argv, "--batch-size", "1", "--json"]) == 0
    assert '"precision": "mixed_float16"' in capsys.readouterr().out
    # A timing command runs it too, after one warning line.
    bench = ["bench", "--variant", "folded", "--precision", "mixed_float16", "--device", "cpu"]
    tiny = ["--batch-size", "1", "--time-steps", "2", "--repeats", "1", "--warmup", "0"]
    assert main([*bench, *tiny, "--no-store", "--json"]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "float16 on a CPU is emulated" in warnings[0]
    assert '"precision": "mixed_float16"' in captured.out
