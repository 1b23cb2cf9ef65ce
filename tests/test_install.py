"""The Makefile's install path, by `make -n` (nothing is installed): the and-cuda wheels when
the machine has an NVIDIA GPU (the fake nvidia-smi of an H100 on PATH, or a GPU folder under
the NVIDIA proc folder), the plain wheel otherwise, GPU=1 / GPU=0 over the detection, and a
stamp per wheel, so a venv made without a GPU is upgraded once when one appears and a second
`make` installs nothing."""

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"
GPU_INSTALL = "pip install --quiet --disable-pip-version-check -r requirements-gpu.txt"
CPU_INSTALL = "pip install --quiet --disable-pip-version-check -r requirements.txt"


def make_dry_run(*arguments: str, cwd: Path = ROOT, path: str | None = None) -> str:
    """`make -n ...` in a clean environment: no make variables inherited from a `make test`
    that runs this test (MAKEFLAGS would carry its GPU=...)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GPU", "NVIDIA_SMI", "NVIDIA_PROC"}
    }
    if path is not None:
        env["PATH"] = path
    completed = subprocess.run(
        ["make", "--no-print-directory", "-n", *arguments],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def fresh_copy(tmp_path: Path) -> Path:
    """The install files as a new clone has them, no .venv: what `make -n` shows then does not
    depend on the venv of the checkout running the tests (a `make test` has made it)."""
    copy = tmp_path / "clone"
    copy.mkdir()
    for name in ("Makefile", "requirements.txt", "requirements-dev.txt", "requirements-gpu.txt"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    return copy


def no_gpu(tmp_path: Path) -> tuple[str, ...]:
    return (f"NVIDIA_SMI={tmp_path / 'no-nvidia-smi'}", f"NVIDIA_PROC={tmp_path / 'proc'}")


def test_requirements_gpu_is_the_runtime_with_the_and_cuda_extra():
    lines = [
        line.strip()
        for line in (ROOT / "requirements-gpu.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines == ["-r requirements.txt", "tensorflow[and-cuda]==2.21.*"]
    assert "tensorflow==2.21.*" in (ROOT / "requirements.txt").read_text().splitlines()


def test_the_fake_h100_on_path_makes_run_install_the_and_cuda_wheels(tmp_path):
    path = f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}"
    clone = fresh_copy(tmp_path)
    out = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=clone, path=path)
    assert GPU_INSTALL in out and CPU_INSTALL not in out
    assert "an NVIDIA GPU was found: TensorFlow with its CUDA libraries" in out
    assert "touch .venv/.runtime-gpu" in out
    test = make_dry_run("test", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=clone, path=path)
    assert "-r requirements-dev.txt -r requirements-gpu.txt" in test
    assert "touch .venv/.runtime-gpu .venv/.dev-gpu" in test


def test_without_a_gpu_run_installs_the_plain_wheel(tmp_path):
    out = make_dry_run("run", *no_gpu(tmp_path), cwd=fresh_copy(tmp_path))
    assert CPU_INSTALL in out and "requirements-gpu.txt" not in out
    assert "no NVIDIA GPU was found: the plain TensorFlow wheel" in out


def test_the_kernel_modules_gpu_folder_is_enough(tmp_path):
    (tmp_path / "proc" / "gpus" / "0000:18:00.0").mkdir(parents=True)
    out = make_dry_run(
        "run",
        f"NVIDIA_SMI={tmp_path / 'no-nvidia-smi'}",
        f"NVIDIA_PROC={tmp_path / 'proc'}",
        cwd=fresh_copy(tmp_path),
    )
    assert GPU_INSTALL in out


def test_gpu_overrides_the_detection(tmp_path):
    path = f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}"
    clone = fresh_copy(tmp_path)
    assert CPU_INSTALL in make_dry_run("run", "GPU=0", cwd=clone, path=path)
    assert GPU_INSTALL in make_dry_run("run", "GPU=1", *no_gpu(tmp_path), cwd=clone)
    completed = subprocess.run(
        ["make", "-n", "run", "GPU=yes"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode != 0 and "GPU must be 1" in completed.stderr


def test_a_gpu_appearing_upgrades_a_cpu_venv_once_and_nothing_else_reinstalls(tmp_path):
    """A copy of the install files with a venv whose stamp says the plain wheel is in."""
    tmp_path = fresh_copy(tmp_path)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    later = time.time() + 5  # newer than every requirements file
    for stamp in (".runtime-cpu", ".dev-cpu"):
        (tmp_path / ".venv" / stamp).touch()
        os.utime(tmp_path / ".venv" / stamp, (later, later))
    quiet = make_dry_run("run", *no_gpu(tmp_path), cwd=tmp_path)
    assert "pip install" not in quiet and "make_venv" not in quiet  # up to date: no reinstall
    assert "pip install" not in make_dry_run("test", *no_gpu(tmp_path), cwd=tmp_path)
    path = f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}"
    upgrade = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=tmp_path, path=path)
    assert GPU_INSTALL in upgrade and "make_venv" not in upgrade
    (tmp_path / ".venv" / ".runtime-gpu").touch()
    os.utime(tmp_path / ".venv" / ".runtime-gpu", (later, later))
    done = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=tmp_path, path=path)
    assert "pip install" not in done
