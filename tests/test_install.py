"""The Makefile's install path, by `make -n` (nothing is installed): the and-cuda wheels when
the machine has an NVIDIA GPU (the fake nvidia-smi, or a GPU folder under the NVIDIA proc folder),
the plain wheel otherwise, GPU=1 / GPU=0 over the detection, a stamp per wheel (a venv upgrades
once), Keras's JAX and PyTorch backends for `make test` and `make run BACKENDS=1` only, and the
inference runtimes for `make test` and `make run RUNTIMES=1` only."""

import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"
GPU_INSTALL = "pip install --quiet --disable-pip-version-check -r requirements-gpu.txt"
CPU_INSTALL = "pip install --quiet --disable-pip-version-check -r requirements.txt"
BACKENDS_CPU = "pip install --quiet --disable-pip-version-check -r requirements-backends.txt"
RUNTIMES = "pip install --quiet --disable-pip-version-check -r requirements-runtimes.txt"
BACKENDS_GPU = "pip install --quiet --disable-pip-version-check -r requirements-backends-gpu.txt"
EDITABLE = "pip install --quiet --disable-pip-version-check --no-deps -e ."
H100_PATH = f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}"  # the fake nvidia-smi of an H100


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
    requirements = ("", "-dev", "-notebook", "-gpu", "-backends", "-backends-gpu", "-runtimes")
    for name in ["Makefile", *(f"requirements{kind}.txt" for kind in requirements)]:
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(ROOT / "scripts", copy / "scripts")
    return copy


def _venv_with_stamps(clone: Path, *stamps: str, when: float) -> None:
    (clone / ".venv" / "bin").mkdir(parents=True, exist_ok=True)
    (clone / ".venv" / "bin" / "python").touch()
    for stamp in stamps:
        (clone / ".venv" / stamp).touch()
        os.utime(clone / ".venv" / stamp, (when, when))


def no_gpu(tmp_path: Path) -> tuple[str, ...]:
    return (f"NVIDIA_SMI={tmp_path / 'no-nvidia-smi'}", f"NVIDIA_PROC={tmp_path / 'proc'}")


def _requirements(name: str) -> list[str]:
    lines = (line.strip() for line in (ROOT / name).read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_the_gpu_files_are_the_cpu_files_cuda_builds():
    assert _requirements("requirements-gpu.txt") == [
        "-r requirements.txt",
        "tensorflow[and-cuda]==2.21.*",
    ]
    assert "tensorflow==2.21.*" in _requirements("requirements.txt")
    assert _requirements("requirements-backends.txt") == ["jax[cpu]==0.10.2", "torch==2.13.0"]
    # JAX's CUDA 12 extra: the CUDA TensorFlow 2.21's and-cuda wheels use; torch's default wheel.
    assert _requirements("requirements-backends-gpu.txt") == [
        "jax[cuda12]==0.10.2",
        "torch==2.13.0",
    ]


def test_both_stamps_install_this_checkout_editable_after_its_requirements(tmp_path):
    """The README's library snippets import hierlstm from any folder: `make run` and `make test`
    install the checkout itself into .venv (editable, no dependencies: the requirements files
    pin them), after the requirements and before the stamp says the venv is ready."""
    clone = fresh_copy(tmp_path)
    run = make_dry_run("run", *no_gpu(tmp_path), cwd=clone)
    assert run.index(CPU_INSTALL) < run.index(EDITABLE) < run.index("touch .venv/.runtime-cpu")
    test = make_dry_run("test", *no_gpu(tmp_path), cwd=clone)
    requirements = "-r requirements-dev.txt -r requirements.txt -r requirements-backends.txt"
    assert test.index(requirements) < test.index(EDITABLE) < test.index("touch .venv/.runtime-cpu")
    assert test.count(EDITABLE) == 1  # the dev stamp's recipe; the run stamp is touched by it


def test_the_fake_h100_on_path_makes_run_install_the_and_cuda_wheels(tmp_path):
    clone = fresh_copy(tmp_path)
    out = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=clone, path=H100_PATH)
    assert GPU_INSTALL in out and CPU_INSTALL not in out
    assert "an NVIDIA GPU was found: TensorFlow with its CUDA libraries" in out
    assert "touch .venv/.runtime-gpu" in out
    test = make_dry_run("test", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=clone, path=H100_PATH)
    assert "-r requirements-dev.txt -r requirements-gpu.txt" in test
    assert "touch .venv/.runtime-gpu .venv/.backends-gpu .venv/.dev-gpu" in test


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
    clone = fresh_copy(tmp_path)
    assert CPU_INSTALL in make_dry_run("run", "GPU=0", cwd=clone, path=H100_PATH)
    assert GPU_INSTALL in make_dry_run("run", "GPU=1", *no_gpu(tmp_path), cwd=clone)
    completed = subprocess.run(
        ["make", "-n", "run", "GPU=yes"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert completed.returncode != 0 and "GPU must be 1" in completed.stderr


def test_a_gpu_appearing_upgrades_a_cpu_venv_once_and_nothing_else_reinstalls(tmp_path):
    """A copy of the install files with a venv whose stamp says the plain wheel is in."""
    tmp_path = fresh_copy(tmp_path)
    later = time.time() + 5  # newer than every requirements file
    _venv_with_stamps(tmp_path, ".runtime-cpu", ".dev-cpu", when=later)
    quiet = make_dry_run("run", *no_gpu(tmp_path), cwd=tmp_path)
    assert "pip install" not in quiet and "make_venv" not in quiet  # up to date: no reinstall
    assert "pip install" not in make_dry_run("test", *no_gpu(tmp_path), cwd=tmp_path)
    upgrade = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=tmp_path, path=H100_PATH)
    assert GPU_INSTALL in upgrade and "make_venv" not in upgrade
    _venv_with_stamps(tmp_path, ".runtime-gpu", when=later)
    done = make_dry_run("run", f"NVIDIA_PROC={tmp_path / 'proc'}", cwd=tmp_path, path=H100_PATH)
    assert "pip install" not in done


def test_make_test_installs_the_backends_and_make_run_only_when_asked(tmp_path):
    clone = fresh_copy(tmp_path)
    test = make_dry_run("test", *no_gpu(tmp_path), cwd=clone)
    assert "-r requirements-dev.txt -r requirements.txt -r requirements-backends.txt" in test
    assert "touch .venv/.runtime-cpu .venv/.backends-cpu .venv/.dev-cpu" in test
    assert "requirements-backends-gpu.txt" not in test
    plain = make_dry_run("run", *no_gpu(tmp_path), cwd=clone)
    assert "requirements-backends" not in plain and ".backends-" not in plain
    asked = make_dry_run("run", "BACKENDS=1", *no_gpu(tmp_path), cwd=clone)
    assert CPU_INSTALL in asked and BACKENDS_CPU in asked and "touch .venv/.backends-cpu" in asked
    assert asked.index(CPU_INSTALL) < asked.index(BACKENDS_CPU) < asked.index("streamlit run")
    completed = subprocess.run(
        ["make", "-n", "run", "BACKENDS=yes", "GPU=0"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0 and "BACKENDS must be 1" in completed.stderr


def test_on_a_gpu_machine_the_backends_cuda_builds_are_installed(tmp_path):
    clone = fresh_copy(tmp_path)
    proc = f"NVIDIA_PROC={tmp_path / 'proc'}"
    test = make_dry_run("test", proc, cwd=clone, path=H100_PATH)
    assert "-r requirements-gpu.txt -r requirements-backends-gpu.txt" in test
    assert BACKENDS_CPU not in test and "touch .venv/.runtime-gpu .venv/.backends-gpu" in test
    run = make_dry_run("run", "BACKENDS=1", proc, cwd=clone, path=H100_PATH)
    assert BACKENDS_GPU in run and BACKENDS_CPU not in run and "touch .venv/.backends-gpu" in run


def test_a_venv_made_before_the_backends_file_installs_it_once(tmp_path):
    clone = fresh_copy(tmp_path)
    now = time.time()
    for name in ("requirements.txt", "requirements-dev.txt"):  # older than the stamps
        os.utime(clone / name, (now - 100, now - 100))
    os.utime(clone / "requirements-backends.txt", (now + 5, now + 5))  # newer: it came later
    _venv_with_stamps(clone, ".runtime-cpu", ".dev-cpu", when=now)
    assert "pip install" not in make_dry_run("run", *no_gpu(tmp_path), cwd=clone)
    upgrade = make_dry_run("test", *no_gpu(tmp_path), cwd=clone)
    assert "-r requirements-backends.txt" in upgrade and "make_venv" not in upgrade
    _venv_with_stamps(clone, ".runtime-cpu", ".dev-cpu", ".backends-cpu", when=now + 10)
    assert "pip install" not in make_dry_run("test", *no_gpu(tmp_path), cwd=clone)
    assert "pip install" not in make_dry_run("run", "BACKENDS=1", *no_gpu(tmp_path), cwd=clone)


def test_make_test_installs_the_runtimes_and_make_run_only_when_asked(tmp_path):
    clone = fresh_copy(tmp_path)
    test = make_dry_run("test", *no_gpu(tmp_path), cwd=clone)
    assert "-r requirements-backends.txt -r requirements-runtimes.txt" in test
    assert ".venv/.dev-cpu .venv/.runtimes" in test  # the dev recipe stamps them in too
    plain = make_dry_run("run", *no_gpu(tmp_path), cwd=clone)
    assert "requirements-runtimes" not in plain and ".runtimes" not in plain
    asked = make_dry_run("run", "RUNTIMES=1", *no_gpu(tmp_path), cwd=clone)
    assert asked.index(CPU_INSTALL) < asked.index(RUNTIMES) < asked.index("streamlit run")
    assert BACKENDS_CPU not in asked and "touch .venv/.runtimes" in asked
    both = make_dry_run("run", "RUNTIMES=1", "BACKENDS=1", *no_gpu(tmp_path), cwd=clone)
    assert BACKENDS_CPU in both and RUNTIMES in both
    completed = subprocess.run(
        ["make", "-n", "run", "RUNTIMES=yes", "GPU=0"],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode != 0 and "RUNTIMES must be 1" in completed.stderr
