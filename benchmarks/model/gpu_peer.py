"""hierlstm's fastest variants against the same function in PyTorch, both on one device: the
GPU when TensorFlow sees one and PyTorch has CUDA, else the CPU.

    .venv/bin/pip install -r requirements-bench.txt   # PyTorch; on a GPU, a CUDA build of it
    .venv/bin/python -m benchmarks gpu_peer [--device auto|cpu|gpu:N] [--repeats 20]
        [--shapes 8x50,32x100,128x200] [--json FILE]

hierlstm's candidates come from the harness's `prepare`, PyTorch's model from
`torch_peer.torch_model`, timed in interleaved rounds. A difference from the numpy reference over
the tolerance is flagged in the table rather than refused: on a GPU, cuDNN and TensorFloat-32
matmuls round differently.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from benchmarks.common import header, tf
from benchmarks.model.torch_peer import forward_timer, torch_model
from benchmarks.model.vs_pytorch import candidates, same_threads
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.config import RunConfig
from hierlstm.hardware import device_label, resolve_device
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_forward
from hierlstm.timing.harness import make_inputs, no_progress, prepare
from hierlstm.timing.rounds import timer_rounds

TOLERANCE = {"CPU": 1e-5, "GPU": 5e-3}


def run_shape(spec: str, batch: int, steps: int, repeats: int, torch) -> dict:
    device = resolve_device(spec)
    kind, index = device.strip("/").split(":")
    base = RunConfig(batch_size=batch, time_steps=steps, device=spec)
    params = init_params(base)
    expected = reference_forward(params, make_inputs(base))
    timers, differences = {}, {}
    for label, name, xla in candidates():
        run = prepare(base.replace(variant=name, xla=xla), seed=0, progress=no_progress)
        with tf.device(run.device):
            output = np.asarray(run.forward(run.inputs), np.float64)
        differences[label] = float(np.max(np.abs(output - expected)))
        timers[label] = run.call
    cuda = kind == "GPU"
    torch_device = torch.device(f"cuda:{index}" if cuda else "cpu")
    model = torch_model(params, torch).to(torch_device)
    torch_input = torch.from_numpy(make_inputs(base)).to(torch_device)
    with torch.inference_mode():
        output = model(torch_input).cpu().numpy().astype(np.float64)
    differences["PyTorch"] = float(np.max(np.abs(output - expected)))
    timers["PyTorch"] = forward_timer(model, torch_input, torch, cuda)
    samples = timer_rounds(timers, repeats, warmup=3)
    medians = {name: float(np.median(values)) * 1e3 for name, values in samples.items()}
    best = min((name for name in timers if name != "PyTorch"), key=medians.get)
    paired = np.array(samples[best]) / np.array(samples["PyTorch"])
    return {
        "shape": f"{batch}x{steps}",
        "median_ms": medians,
        "best": best,
        "best_over_pytorch": float(np.median(paired)),
        "best_over_pytorch_p10": float(np.percentile(paired, 10)),
        "best_over_pytorch_p90": float(np.percentile(paired, 90)),
        "max_abs_diff": differences,
        "tolerance": TOLERANCE[kind],
    }


def markdown(rows: list[dict]) -> str:
    names = list(rows[0]["median_ms"])
    table = []
    for row in rows:
        over = [name for name, diff in row["max_abs_diff"].items() if diff > row["tolerance"]]
        table.append(
            [
                row["shape"],
                *(f"{row['median_ms'][name]:.2f}" for name in names),
                row["best"],
                f"{row['best_over_pytorch']:.2f} ({row['best_over_pytorch_p10']:.2f}-"
                f"{row['best_over_pytorch_p90']:.2f})",
                f"{max(row['max_abs_diff'].values()):.1e}"
                + (f" (over {row['tolerance']:.0e}: {', '.join(over)})" if over else ""),
            ]
        )
    head = ("shape", *[f"{name} ms" for name in names], "hierlstm best")
    return markdown_table((*head, "best / PyTorch (p10-p90)", "max abs diff"), table)


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--device", default="auto", help="auto | cpu | gpu:N")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    import torch

    device = resolve_device(args.device)
    if device.startswith("/GPU") and not torch.cuda.is_available():
        raise SystemExit(
            f"TensorFlow sees {device} but this PyTorch ({torch.__version__}) has no CUDA: "
            "install a CUDA build of torch, or pass --device cpu."
        )
    if device.startswith("/CPU"):
        same_threads(torch, len(os.sched_getaffinity(0)))
    print(header(f"hierlstm against PyTorch on {device_label(args.device)}"))
    cuda = f", CUDA {torch.version.cuda}" if torch.version.cuda else ""
    print(f"PyTorch {torch.__version__}{cuda}; {args.repeats} interleaved rounds.\n")
    rows = []
    for batch, steps in args.shapes:
        rows.append(run_shape(args.device, batch, steps, args.repeats, torch))
        print(f"{batch}x{steps} done", file=sys.stderr, flush=True)
    print(markdown(rows))
    if args.json:
        document = {"device": device_label(args.device), "torch": torch.__version__, "rows": rows}
        with open(args.json, "w", encoding="utf-8") as output:
            json.dump(document, output, indent=2)


if __name__ == "__main__":
    main()
