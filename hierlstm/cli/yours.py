"""`audit MODEL`: your own Keras model traced, every recurrent layer's kernel per backend and why,
checked on the graph traced as a GPU traces it (TensorFlow), the rewrite saved (`--rewrite OUT`)
and timed beside the original (`--bench`). Sizes and backends are checked before TensorFlow is
imported; a refused file is one `error:` line, exit 2."""

from __future__ import annotations

import collections
import re
from pathlib import Path

from hierlstm.cli.flags import UsageError, usage, whole_number
from hierlstm.cli.format import shown, text_table
from hierlstm.registry import BACKEND_RECORDS, KERAS_BACKENDS

MAX_SIZE = 100_000


def yours_settings(args) -> tuple[dict[str, int], list[str]]:
    """(sizes by name, backends shown) from the flags; UsageError for a bad one or a file that
    is not there."""
    sizes = {}
    for text in args.size or []:
        match = re.fullmatch(r"([A-Za-z_][\w.]*)=(\S+)", text)
        if not match:
            raise UsageError(f"--size takes NAME=N (e.g. time=50); got {text!r}.")
        sizes[match[1]] = whole_number(f"--size {match[1]}", match[2], 1, MAX_SIZE)
    # the Keras backends, each with its cuDNN rule (the runtimes run the exported file instead)
    backends = list(dict.fromkeys(args.backend or KERAS_BACKENDS))
    unknown = [name for name in backends if name not in KERAS_BACKENDS]
    if unknown:
        raise UsageError(f"--backend is one of {', '.join(KERAS_BACKENDS)}; got {unknown[0]!r}.")
    if not Path(args.model).is_file():
        raise UsageError(f"{args.model}: no such file.")
    if args.repeats is not None:
        whole_number("--repeats", args.repeats, 1, 100)
    return sizes, backends


def cmd_yours(args) -> int:
    from hierlstm.yours import audit, load, rewrite, verify

    sizes, backends = yours_settings(args)
    try:
        model, info = load.load_model_file(args.model)
        result = audit.audit(
            model, sizes, jit_compile=args.jit_compile, torch_compile=args.torch_compile
        )
    except load.ModelFileError as error:
        raise UsageError(str(error)) from None
    except ValueError as error:  # a size named for no None dimension
        raise UsageError(str(error)) from None
    document = {
        "file": {"path": info.path, "name": info.name, "sha256": info.sha256},
        "audit": result.to_dict(),
        "verified": verify.verify(model, result).to_dict(),
    }
    if args.rewrite or args.bench:
        document["rewrite"] = _rewrite(model, info, result, args, rewrite)
    if args.bench:  # the model exported and timed on the runtimes beside TensorFlow
        from hierlstm.backends.exported import bench_model, runtimes_missing
        from hierlstm.model.export import ExportError

        if reason := runtimes_missing():  # the rest of --bench stands; this says how to add them
            document["runtimes"] = {"refused": reason}
        else:
            with usage(ExportError):
                timed = bench_model(model, result.input_shapes, int(args.repeats or 5))
            document["runtimes"] = timed.to_dict()
    shown(args.json, document, lambda: format_audit(document, backends))
    return 0


def _rewrite(model, info, result, args, rewrite) -> dict:
    """The rewrite's part of the document: its changes and check, the file saved (--rewrite),
    and with --bench both timed and the run stored (`measure.rewrite_bench_and_store`)."""
    rewritten, changes = rewrite.rewrite(model)
    if rewritten is None:
        return {"changes": []}
    part = {
        "changes": [vars(change) for change in changes],
        "check": rewrite.check(model, rewritten, result.input_shapes).to_dict(),
    }
    if args.rewrite:
        rewritten.save(args.rewrite)
        part["saved"] = str(args.rewrite)
    if args.bench:
        from hierlstm.cli.timing import measured, open_store
        from hierlstm.measure import rewrite_bench_and_store

        repeats = int(args.repeats or 5)
        store = open_store(args)
        run = measured(rewrite_bench_and_store, model, info, result.input_shapes, repeats, store)
        _changes, _check, timing = run.value
        part["timing"] = timing.to_dict()
        part["speedup"] = {phase: timing.speedup(phase) for phase in ("forward", "step")}
        part["stored"] = run.first_id
        if run.refused is not None:
            part["not_stored"] = run.reason
    return part


def format_audit(document: dict, backends: list[str]) -> str:
    result = document["audit"]
    shapes = ", ".join(str(tuple(shape)) for shape in result["input_shapes"])
    sizes = " ".join(f"{name}={size}" for name, size in result["sizes"].items())
    lines = [f"{result['model']} ({document['file']['sha256']}): inputs {shapes} at {sizes}", ""]
    rows = [
        (
            "  " * step["depth"] + step["path"],
            step["layer"],
            tuple(step["symbolic_shape"]),
            tuple(step["concrete_shape"]),
            f"{step['params']:,}",
            "-" if step["flops"] is None else f"{step['flops']:,}",
        )
        for step in result["steps"]
    ]
    header = ("layer", "class", "symbolic", "concrete", "params", "FLOPs")
    lines += [text_table(header, rows), ""]
    if result["uncounted"]:
        lines.append(f"FLOPs not counted (no formula): {', '.join(result['uncounted'])}")
    verified = {layer["path"]: layer for layer in document["verified"]["layers"]}
    rows = []
    for row in result["recurrent"]:
        for backend in backends:
            kernel = row["kernels"][backend]
            check = ""
            if BACKEND_RECORDS[backend].in_process:  # the graph traced here: TensorFlow's
                check = "yes" if verified[row["path"]]["agrees"] else "NO"
            rows.append(
                (row["path"], row["layer"], backend, kernel["kernel"], check, kernel["why"])
            )
    if rows:
        header = ("recurrent layer", "class", "backend", "kernel", "verified", "why")
        lines += ["", text_table(header, rows)]
        lines += _every_reason(result["recurrent"], backends)
    for title, key in (
        ("pitfalls", "pitfalls"),
        ("suggestions", "suggestions"),
        ("notes", "notes"),
    ):
        if result[key]:
            lines += ["", f"{title}:", *(f"- {item['text']}" for item in result[key])]
    if "rewrite" in document:
        lines += ["", *_format_rewrite(document["rewrite"])]
    if "runtimes" in document:
        lines += _runtime_lines(document["runtimes"])
    return "\n".join(lines)


def _format_rewrite(part: dict) -> list[str]:
    if not part["changes"]:
        return ["rewrite: nothing applies mechanically"]
    lines = [
        "rewrite:",
        *(f"- {c['path']}: {c['before']} -> {c['after']}" for c in part["changes"]),
    ]
    check = part["check"]
    verdict = "match" if check["matches"] else "DIFFER"
    lines.append(
        f"outputs and gradients {verdict} (largest differences {check['output_diff']:.3g}, "
        f"{check['gradient_diff']:.3g})"
    )
    if "saved" in part:
        lines.append(f"saved: {part['saved']}")
    for phase, speedup in part.get("speedup", {}).items():
        original = part["timing"][f"original/{phase}"]["median_s"] * 1e3
        rewritten = part["timing"][f"rewritten/{phase}"]["median_s"] * 1e3
        lines.append(f"{phase}: {original:.3g} ms -> {rewritten:.3g} ms ({speedup:.2f}x)")
    return lines


def _runtime_lines(part: dict) -> list[str]:
    """The runtimes' part of `--bench`: the fused ops by layer, each runtime's median forward pass
    beside TensorFlow's, and the runtimes not installed."""
    if "refused" in part:
        return ["", f"not run on the runtimes: {part['refused']}"]
    counts = collections.Counter((entry["layer"], entry["op"]) for entry in part["fused"])
    fused = ", ".join(f"{layer} ({n} {op})" for (layer, op), n in counts.items()) or "none"
    medians = part["median_s"]
    lines = ["", f"exported to ONNX (tf2onnx): fused recurrent ops: {fused}"]
    for name, median in medians.items():
        versus = f", {median / medians['tensorflow']:.2f}x TensorFlow's"  # 1.00x on its own line
        diff = part["max_abs_diff"].get(name)
        checked = f", max |{name} - Keras| {diff:.1e}" if diff is not None else ""
        lines.append(f"  forward {name}: {median * 1e3:.3g} ms{versus}{checked}")
    lines += [f"  {name}: {reason}" for name, reason in part["missing"].items()]
    return lines


def _every_reason(recurrent: list[dict], backends) -> list[str]:
    """Every condition each layer fails per backend, with the fix for each (where more than the
    first, which the table gives, or where any has a fix)."""
    lines = []
    for row in recurrent:
        for backend in backends:
            for found in row["kernels"][backend]["reasons"]:
                fix = f" -> {found['fix']}" if found["fix"] else ""
                lines.append(f"  {row['path']} [{backend}]: {found['why']}{fix}")
    return ["", "every reason, with its fix:", *lines] if lines else []
