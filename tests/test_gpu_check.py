"""benchmarks/model/gpu_check.sh and its report, without running the check's minutes of timing: the
script is valid sh and refuses a missing interpreter; the report names what ran, what failed
and what did not run, and says plainly when there is no GPU or when one is present but
unusable (doctor's real output, with the fake nvidia-smi of an H100 on PATH)."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

from factories import python, run_cli

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "model" / "gpu_check.sh"
FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"


def report(folder: Path) -> str:
    completed = python("-m", "benchmarks.model.gpu_report", folder, "--seconds", "7")
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert (folder / "report.md").read_text() + "\n" == completed.stdout  # written and shown
    return completed.stdout


def test_the_script_is_valid_sh_and_refuses_a_missing_python(tmp_path):
    assert os.access(SCRIPT, os.X_OK)
    assert subprocess.run(["sh", "-n", str(SCRIPT)], timeout=30).returncode == 0
    completed = subprocess.run(
        [str(SCRIPT)],
        env={**os.environ, "PYTHON": str(tmp_path / "no-python"), "OUT": str(tmp_path / "out")},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 2
    assert "no-python not found: run make run or make test first" in completed.stderr


def test_a_report_of_steps_that_did_not_run_says_so(tmp_path):
    (tmp_path / "steps.tsv").write_text("peer\tskipped\t0\tPyTorch is not installed\n")
    (tmp_path / "doctor.log").write_text("Traceback ...\nRuntimeError: no device\n")
    text = report(tmp_path)
    assert "- duration: 7 s" in text
    assert "doctor did not run: RuntimeError: no device" in text
    assert "check did not run: no log" in text
    for shape in ("batch 8, time 50", "batch 32, time 100", "batch 128, time 200"):
        assert text.count(f"### {shape}\n\ndid not run: no log") == 2  # inference, training
    assert "check --task training did not run: no log" in text
    assert "Not run: PyTorch is not installed." in text


def test_the_report_says_when_a_gpu_is_present_but_unusable(tmp_path):
    env = {
        **os.environ,
        "PATH": f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}",
        "HIERLSTM_NVIDIA_PROC": str(tmp_path / "proc"),
        "CUDA_VISIBLE_DEVICES": "-1",  # TensorFlow sees no GPU, on any machine
    }
    doctor = python("-m", "hierlstm", "doctor", "--json", "--no-probe", env=env)
    assert json.loads(doctor.stdout)["tensorflow_gpus"] == []
    (tmp_path / "doctor.out").write_text(doctor.stdout)
    (tmp_path / "steps.tsv").write_text(f"doctor\t{doctor.returncode}\t3\tdoctor --json\n")
    text = report(tmp_path)
    assert (
        "- NVIDIA GPUs: NVIDIA H100 80GB HBM3 (compute capability 9.0, 81559 MiB), driver" in text
    )
    assert (
        "**No GPU that TensorFlow can use was found: every step ran on the CPU.** An NVIDIA "
        in text
    )
    assert "[unusable] An NVIDIA H100 80GB HBM3 is present but TensorFlow cannot use it" in text
    assert "| doctor | 1 | 3 | `doctor --json` |" in text


def test_the_report_shows_a_training_step_and_its_phases(tmp_path, capsys):
    """A real (tiny) `bench --task training --json` in the report: the step, vs nested, and
    the phases that add up to it."""
    status, out, err = run_cli(
        capsys, "bench", "--task", "training", "--variant", "nested", "--variant", "folded",
        "--batch-size", "2", "--time-steps", "3", "--repeats", "2", "--warmup", "1", "--json",
        "--no-store",
    )  # fmt: skip
    assert status == 0, err[-2000:]
    (tmp_path / "train-8x50.out").write_text(out)
    (tmp_path / "steps.tsv").write_text("train-8x50\t0\t9\tbench --task training ...\n")
    text = report(tmp_path)
    section = text.split("## Training step")[1].split("### batch 32")[0]
    assert "phases ms: forward / backward / update (sum / step)" in section
    for variant in ("nested", "folded"):
        (line,) = [row for row in section.splitlines() if row.startswith(f"| {variant} ")]
        phases = line.split("|")[-2].strip()
        forward, backward, rest = phases.split(" / ")
        # backward = forward+backward's median less forward's, timed apart: below 0 under load
        assert float(forward) > 0 and math.isfinite(float(backward)) and "(" in rest


def _dry_run(tmp_path: Path, installed: str) -> tuple[str, str]:
    """The script's steps with `installed` as the Keras backends whose packages import: a
    python that answers that one question and hands every other to this interpreter."""
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$*" in\n'
        f'    *"import BACKENDS, missing"*) echo "{installed}" ;;\n'
        f'    *) exec "{sys.executable}" "$@" ;;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    out = tmp_path / f"out-{installed.replace(' ', '-')}"
    env = {**os.environ, "PYTHON": str(fake), "OUT": str(out), "DRY_RUN": "1", "QUICK": "1"}
    completed = subprocess.run(
        [str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout, (out / "steps.tsv").read_text()


PORTABLE_FLAGS = (
    "--variant nested --variant time_distributed --variant folded --variant shared_cell"
)


def test_without_tensorflow_the_portable_variants_still_run_on_jax_and_torch(tmp_path):
    out, steps = _dry_run(tmp_path, "jax torch")
    names = [line.split(":")[0] for line in out.splitlines()]
    assert names == [
        *("check-jax", "check-training-jax", "check-torch", "check-training-torch"),
        *("backends-8x50", "backends-train-8x50", "export"),
    ]
    assert f"bench --backend jax --backend torch {PORTABLE_FLAGS} --batch-size 8" in out
    assert "fused" not in out and "vectorized_map" not in out and "doctor" not in out
    assert "tensorflow\tskipped\t0\tTensorFlow is not installed" in steps


def test_every_installed_backend_runs_beside_tensorflow_s_own_steps(tmp_path):
    out, _ = _dry_run(tmp_path, "tensorflow jax torch")
    names = [line.split(":")[0] for line in out.splitlines()]
    assert names[:4] == ["doctor", "check-float32", "check-mixed_float16", "check-mixed_bfloat16"]
    assert {"bench-8x50", "bench-8x50-xla", "train-8x50", "check-jax", "check-torch"} <= set(names)
    (line,) = [line for line in out.splitlines() if line.startswith("backends-8x50:")]
    assert f"--backend tensorflow --backend jax --backend torch {PORTABLE_FLAGS}" in line
    (bench,) = [line for line in out.splitlines() if line.startswith("bench-8x50:")]
    assert "--variant fused" in bench and "--backend" not in bench  # TensorFlow's six, in-process
    alone, _ = _dry_run(tmp_path, "tensorflow")
    assert "backends-" not in alone and "--backend" not in alone
