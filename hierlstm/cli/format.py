"""Plain-text tables for the terminal: the shape trace, benchmark and scaling results."""

from __future__ import annotations


def _shape(dims) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in dims) + ")"


def format_trace(report: dict) -> str:
    header = ("step", "layer", "symbolic", "concrete", "axes", "params", "MFLOPs", "KiB")
    rows = [
        (
            "  " * step["depth"]
            + step["path"]
            + (f" x{step['calls']}" if step["calls"] > 1 else ""),
            step["layer"],
            _shape(step["symbolic_shape"]),
            _shape(step["concrete_shape"]),
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


def format_scaling(rows) -> str:
    header = (
        "variant",
        "replicas",
        "per replica",
        "median ms",
        "samples/s",
        "1 replica samples/s",
        "efficiency (p10-p90)",
        "output checksum",
    )
    lines = []
    for row in rows:
        if row["status"] != "ok":
            lines.append((row["variant"], "failed: " + row["error"], *[""] * 6))
            continue
        lines.append(
            (
                row["variant"] + (" (noisy)" if row["noisy"] else ""),
                row["replicas"],
                row["per_replica_batch"],
                f"{row['median_s'] * 1e3:.2f}",
                f"{row['throughput']:.1f}",
                f"{row['one_replica_throughput']:.1f}",
                f"{row['scaling_efficiency']:.2f} ({row['efficiency_p10']:.2f}-"
                f"{row['efficiency_p90']:.2f})",
                row["output_checksum"],
            )
        )
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
    return "\n".join([title, text_table(header, lines), *notes])


def json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def format_bench(rows) -> str:
    header = (
        "variant",
        "median ms",
        "p10-p90 ms",
        "IQR/med",
        "first call s",
        "speed-up",
        "GFLOP/s",
        "kernel",
    )
    lines = []
    for row in rows:
        if row["status"] != "ok":
            lines.append((row["variant"], "failed (below)", "", "", "", "", "", ""))
            continue
        lines.append(
            (
                row["variant"] + (" (noisy)" if row["noisy"] else ""),
                f"{row['median_s'] * 1e3:.2f}",
                f"{row['p10_s'] * 1e3:.2f}-{row['p90_s'] * 1e3:.2f}",
                f"{row['iqr_s'] / row['median_s']:.2f}",
                f"{row['first_call_s']:.2f}",
                f"{row['speedup_vs_baseline']:.2f}x",
                f"{row['gflops_per_s']:.2f}",
                row["kernel"],
            )
        )
    config = rows[0]["config"]
    training = config["task"] == "training"
    what = f"training step ({config['optimizer']})" if training else "forward pass"
    title = (
        f"batch {config['batch_size']}, time {config['time_steps']}, {config['precision']}"
        f"{', XLA' if config['xla'] else ''}, one {what}; speed-up = {rows[0]['baseline']} "
        "time / variant time, paired per round\n"
    )
    table = text_table(header, lines)
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
    header = (
        "variant",
        "forward ms",
        "fwd+bwd ms",
        "backward ms",
        "update ms",
        "sum ms",
        "sum / step",
        "kept MB (est.)",
        "peak MB",
    )
    lines = [
        (
            row["variant"],
            f"{row['forward_median_s'] * 1e3:.2f}",
            f"{row['forward_backward_median_s'] * 1e3:.2f}",
            f"{row['backward_s'] * 1e3:.2f}",
            f"{row['update_median_s'] * 1e3:.2f}",
            f"{row['phase_sum_s'] * 1e3:.2f}",
            f"{row['phase_sum_s'] / row['median_s']:.2f}",
            f"{row['kept_activation_bytes'] / 2**20:.1f}",
            f"{row['peak_memory_bytes'] / 2**20:.1f}",
        )
        for row in rows
        if row["status"] == "ok"
    ]
    kinds = sorted({row["peak_memory_kind"] for row in rows if row["status"] == "ok"})
    notes = [
        "phases: forward = forward pass (training=True) and loss; fwd+bwd = the same under a "
        "gradient tape with every gradient; backward = fwd+bwd - forward (derived); update = "
        "the optimizer applying given gradients; sum = fwd+bwd + update. The first call of each "
        "row traced the step's gradient graph.",
        *(f"peak memory: {kind}" for kind in kinds),
    ]
    return "\n".join([text_table(header, lines), *notes])


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
