"""`export`: one variant as an ONNX file (`hierlstm.model.export`), its settings, the variant and
the output folder checked before TensorFlow is imported, the file written once it computes the
numpy reference's outputs."""

from __future__ import annotations

import os
from pathlib import Path

from hierlstm.cli.flags import UsageError, config_from_args, seed_number, usage
from hierlstm.cli.format import shown
from hierlstm.cli.parser import EXPORT_FORMATS


def export_settings(args):
    """(RunConfig, seed, the output path) of `export`'s flags; a variant that does not convert,
    a missing converter or a folder that cannot take the file is a UsageError in one line."""
    from hierlstm.model.export import converter_missing
    from hierlstm.registry import conversion_refusal

    config = config_from_args(args)
    seed = seed_number(args.seed)
    if args.format not in EXPORT_FORMATS:
        raise UsageError(f"--format must be {' or '.join(EXPORT_FORMATS)}; got {args.format!r}.")
    if message := conversion_refusal(config.variant) or converter_missing():
        raise UsageError(message)
    out = Path(args.out)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise UsageError(f"cannot write the ONNX file to {out}: it is a folder.")
    if not folder.is_dir():
        raise UsageError(f"cannot write the ONNX file to {out}: no folder {folder}.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write the ONNX file to {out}: the folder is not writable.")
    return config, seed, out


def cmd_export(args) -> int:
    from hierlstm.model.export import export_onnx, write

    config, seed, out = export_settings(args)
    with usage():  # ExportError: a conversion or a check that failed, a write refused
        exported = export_onnx(config, seed)
        written = write(exported, out)
    found = exported.to_dict()
    shown(
        args.json,
        {"path": str(written), **found},
        lambda: (
            f"wrote {written}: {config.variant}, batch {config.batch_size}, time "
            f"{config.time_steps}, seed {seed}, opset {found['opset']}; max |file - numpy "
            f"reference| {found['max_abs_diff']:.1e} ({found['checked_with']}); "
            f"{found['lstm_ops']} fused LSTM op(s), {found['loops']} Loop(s)"
        ),
    )
    return 0
