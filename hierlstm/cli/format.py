"""Plain-text tables for the terminal: the shape trace, benchmark and scaling results."""

from __future__ import annotations

import json

from hierlstm.model.trace_notes import shape_text


def format_trace(report: dict) -> str:
    header = ("step", "layer", "symbolic", "concrete", "axes", "params", "MFLOPs", "KiB")
    rows = [
        (
            "  " * step["depth"]
            + step["path"]
            + (f" x{step['calls']}" if step["calls"] > 1 else ""),
            step["layer"],
            shape_text(step["symbolic_shape"]),
            shape_text(step["concrete_shape"]),
            ", ".join(step["axes"]),
            f"{step['params']:,}",
            f"{step['flops'] / 1e6:,.2f}",
            f"{step['output_bytes'] / 1024:,.1f}",
        )
        for step in report["layers"]
    ]
    lines = text_table(header, rows).splitlines()
    config = report["config"]
    replicas = report.get("replicas", 1)
    batch = f"batch {config['batch_size']}"
    if replicas > 1:
        batch += (
            f" ({config['strategy']}: {replicas} replicas x {report['per_replica_batch']}; "
            "shapes are one replica's)"
        )
    lines.insert(
        0, f"{config['variant']}: {batch}, time {config['time_steps']}, {config['precision']}\n"
    )
    per = "per replica per forward pass" if replicas > 1 else "per forward pass"
    lines.append(
        f"\ntotal params {report['total_params']:,}; total {report['total_flops'] / 1e6:,.2f} "
        f"MFLOPs {per}; dependent chain {report['dependent_steps']} steps\n"
    )
    lines += [f"{step['path']}: {step['note']}" for step in report["layers"]]
    return "\n".join(lines)


def _ms(column: str):
    return lambda row: f"{row[column] * 1e3:.2f}"


def _noisy(row) -> str:
    return row["variant"] + (" (noisy)" if row["noisy"] else "")


# A table's columns: (header, the cell of a row that ran).
SCALING_COLUMNS = (
    ("variant", _noisy),
    ("replicas", lambda row: row["replicas"]),
    ("per replica", lambda row: row["per_replica_batch"]),
    ("median ms", _ms("median_s")),
    ("samples/s", lambda row: f"{row['throughput']:.1f}"),
    ("1 replica samples/s", lambda row: f"{row['one_replica_throughput']:.1f}"),
    (
        "efficiency (p10-p90)",
        lambda row: (
            f"{row['scaling_efficiency']:.2f} ({row['efficiency_p10']:.2f}-"
            f"{row['efficiency_p90']:.2f})"
        ),
    ),
    ("output checksum", lambda row: row["output_checksum"]),
)
BENCH_COLUMNS = (
    ("variant", _noisy),
    ("median ms", _ms("median_s")),
    ("p10-p90 ms", lambda row: f"{row['p10_s'] * 1e3:.2f}-{row['p90_s'] * 1e3:.2f}"),
    ("IQR/med", lambda row: f"{row['iqr_s'] / row['median_s']:.2f}"),
    ("first call s", lambda row: f"{row['first_call_s']:.2f}"),
    ("speed-up", lambda row: f"{row['speedup_vs_baseline']:.2f}x"),
    ("GFLOP/s", lambda row: f"{row['gflops_per_s']:.2f}"),
    ("kernel", lambda row: row["kernel"]),
)
PHASE_COLUMNS = (
    ("variant", lambda row: row["variant"]),
    ("forward ms", _ms("forward_median_s")),
    ("fwd+bwd ms", _ms("forward_backward_median_s")),
    ("backward ms", _ms("backward_s")),
    ("update ms", _ms("update_median_s")),
    ("sum ms", _ms("phase_sum_s")),
    ("sum / step", lambda row: f"{row['phase_sum_s'] / row['median_s']:.2f}"),
    ("kept MB (est.)", lambda row: f"{row['kept_activation_bytes'] / 2**20:.1f}"),
    ("peak MB", lambda row: f"{row['peak_memory_bytes'] / 2**20:.1f}"),
)


def _table(columns, rows, failed=None) -> str:
    """`columns`' cells of each row that ran; a failed row is its variant and `failed(row)`, or
    is left out without `failed`."""
    cells = []
    for row in rows:
        if row["status"] == "ok":
            cells.append(tuple(cell(row) for _, cell in columns))
        elif failed is not None:
            cells.append((row["variant"], failed(row), *[""] * (len(columns) - 2)))
    return text_table(tuple(header for header, _ in columns), cells)


def format_scaling(rows) -> str:
    table = _table(SCALING_COLUMNS, rows, lambda row: "failed: " + row["error"])
    config = rows[0]["config"]
    title = (
        f"{config['strategy']}, global batch {config['batch_size']}, time "
        f"{config['time_steps']}, {config['precision']}{', XLA' if config['xla'] else ''}; "
        "efficiency = samples/s / (replicas x samples/s of one replica running the per-replica "
        "batch), paired per round\n"
    )
    notes = sorted({row["device"] for row in rows if row["status"] == "ok"})
    if any("/CPU:" in row["device"] and row["replicas"] > 1 for row in rows):
        notes.append(
            "CPU replicas share this machine's cores: the efficiency says nothing about GPUs."
        )
    return "\n".join([title, table, *notes])


def format_sweep(table, axis: str, with_backend: bool) -> str:
    lines = [
        (
            f"{row.variant} [{row.backend}]" if with_backend else row.variant,
            row.value,
            row.status,
            f"{row.median_s * 1e3:.2f}" if row.status == "ok" else row.error,
            f"{row.first_call_s:.2f}" if row.status == "ok" else "",
        )
        for row in table.itertuples()
    ]
    header = ("variant [backend]" if with_backend else "variant", axis)
    return text_table((*header, "status", "median ms", "first call s"), lines)


def json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def shown(as_json: bool, document, text) -> None:
    """`document` as indented JSON, else `text()` (made only when it is printed)."""
    print(json.dumps(document, indent=2, default=json_default) if as_json else text())


def format_bench(rows) -> str:
    config = rows[0]["config"]
    training = config["task"] == "training"
    what = f"training step ({config['optimizer']})" if training else "forward pass"
    title = (
        f"batch {config['batch_size']}, time {config['time_steps']}, {config['precision']}"
        f"{', XLA' if config['xla'] else ''}, one {what}; speed-up = {rows[0]['baseline']} "
        "time / variant time, paired per round\n"
    )
    table = _table(BENCH_COLUMNS, rows, lambda row: "failed (below)")
    if training:
        table += "\n\n" + format_phases(rows)
    reasons = sorted(
        {
            f"generic kernel: {row['kernel_reason']}"
            for row in rows
            if row["status"] == "ok" and row["kernel"] == "generic"
        }
    )
    failures = [f"{row['variant']} failed: {row['error']}" for row in rows if row["status"] != "ok"]
    return "\n".join([title, table, *failures, *reasons])


def format_phases(rows) -> str:
    """A training run's phases, each timed as its own compiled function in the same rounds, their
    sum beside the whole step, and the memory: kept activations (an estimate) and the peak."""
    kinds = sorted({row["peak_memory_kind"] for row in rows if row["status"] == "ok"})
    notes = [
        "phases: forward = forward pass (training=True) and loss; fwd+bwd = the same under a "
        "gradient tape with every gradient; backward = fwd+bwd - forward (derived); update = "
        "the optimizer applying given gradients; sum = fwd+bwd + update. The first call of each "
        "row traced the step's gradient graph.",
        *(f"peak memory: {kind}" for kind in kinds),
    ]
    return "\n".join([_table(PHASE_COLUMNS, rows), *notes])


def format_diff(compared, row_a, row_b) -> str:
    """`results diff`: the two runs, the settings that differ, the ratio B/A with its interval
    and the verdict, then the rule."""
    runs = [
        (
            name,
            row["id"],
            f"{row['variant']} {row['task']} b{row['batch_size']} t{row['time_steps']}",
            row["device"],
            row["created_at"][:19],
            f"{median * 1e3:.4g}",
        )
        for name, row, median in (
            ("A", row_a, compared.median_a_s),
            ("B", row_b, compared.median_b_s),
        )
    ]
    lines = [text_table(("run", "id", "settings", "device", "created (UTC)", "median ms"), runs)]
    if compared.changed:
        changed = [(column, a, b) for column, (a, b) in compared.changed.items()]
        lines += ["", text_table(("changed", "A", "B"), changed)]
    else:
        lines += ["", "same settings, device and library versions"]
    verdict = {"faster": "B faster", "slower": "B slower"}.get(compared.verdict, "within noise")
    lines += [
        "",
        f"ratio B/A {compared.ratio:.4f} ({compared.confidence:.0%} interval "
        f"{compared.low:.4f}-{compared.high:.4f}): {verdict}",
        compared.rule("en"),
    ]
    return "\n".join(lines)


def text_table(header, rows) -> str:
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)
