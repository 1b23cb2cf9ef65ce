"""What the NVIDIA driver says this machine has, without TensorFlow: `nvidia-smi` (`-L` and
`--query-gpu ... --format=csv,noheader,nounits`, memory in MiB), else /proc/driver/nvidia
(HIERLSTM_NVIDIA_PROC for tests). Drivers before ~510 reject `compute_cap`; the query is then
repeated without it."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

from hierlstm import settings

QUERY_FIELDS = ("index", "name", "driver_version", "memory.total", "memory.free", "compute_cap")
PROC_ENV = "HIERLSTM_NVIDIA_PROC"
SMI_TIMEOUT_S = 20.0  # nvidia-smi can take seconds when the driver is not in persistence mode
_LIST_LINE = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: [^)]*\))?\s*$")
_DRIVER_IN_PROC = re.compile(r"NVRM version:.*?\s(\d{3,}\.\d+(?:\.\d+)?)\s")


@dataclasses.dataclass(frozen=True)
class NvidiaGpu:
    index: int  # nvidia-smi's index (PCI bus order), not necessarily TensorFlow's GPU:N
    name: str  # e.g. "NVIDIA H100 80GB HBM3"
    memory_total_mb: int | None = None  # MiB
    memory_free_mb: int | None = None
    compute_capability: tuple[int, int] | None = None


@dataclasses.dataclass(frozen=True)
class DriverReport:
    """The NVIDIA GPUs and driver of this machine, as far as the driver's tools tell."""

    gpus: tuple[NvidiaGpu, ...] = ()
    driver_version: str = ""  # "" when unknown
    source: str = ""  # "nvidia-smi", "/proc/driver/nvidia" (or the override), "" for neither
    nvidia_smi: str = ""  # the nvidia-smi that was run, "" when none is on PATH
    error: str = ""  # the first line of what nvidia-smi said when it failed

    @property
    def present(self) -> bool:
        return bool(self.gpus)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _number(text: str) -> int | None:
    text = text.strip()
    return int(float(text)) if re.fullmatch(r"\d+(\.\d+)?", text) else None


def _capability(text: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def parse_query(text: str, fields=QUERY_FIELDS) -> tuple[str, tuple[NvidiaGpu, ...]]:
    """(driver version, GPUs) from `--query-gpu=<fields> --format=csv,noheader,nounits`."""
    driver, gpus = "", []
    for line in text.splitlines():
        values = [value.strip() for value in line.split(",")]
        if len(values) != len(fields) or not values[0].isdigit():
            continue
        row = dict(zip(fields, values, strict=True))
        version = row.get("driver_version", "")
        if not driver and version and not version.startswith("["):
            driver = version
        gpus.append(
            NvidiaGpu(
                index=int(row["index"]),
                name=row.get("name", ""),
                memory_total_mb=_number(row.get("memory.total", "")),
                memory_free_mb=_number(row.get("memory.free", "")),
                compute_capability=_capability(row.get("compute_cap", "")),
            )
        )
    return driver, tuple(gpus)


def parse_list(text: str) -> tuple[NvidiaGpu, ...]:
    """GPUs from `nvidia-smi -L` (index and name only)."""
    found = (_LIST_LINE.match(line.strip()) for line in text.splitlines())
    return tuple(NvidiaGpu(int(match.group(1)), match.group(2)) for match in found if match)


def parse_proc(folder: Path) -> tuple[str, tuple[NvidiaGpu, ...]]:
    """(driver version, GPUs) from the kernel module's folder: `version` holds "NVRM version:
    NVIDIA UNIX x86_64 Kernel Module  550.54.15  ...", `gpus/<bus id>/information` a
    "Model: <name>" line per GPU."""
    driver = ""
    try:
        match = _DRIVER_IN_PROC.search((folder / "version").read_text(errors="replace"))
        driver = match.group(1) if match else ""
    except OSError:
        pass
    gpus = []
    try:
        buses = sorted(path for path in (folder / "gpus").iterdir() if path.is_dir())
    except OSError:
        buses = []
    for index, bus in enumerate(buses):
        name = ""
        try:
            for line in (bus / "information").read_text(errors="replace").splitlines():
                if line.startswith("Model:"):
                    name = line.split(":", 1)[1].strip()
        except OSError:
            pass
        gpus.append(NvidiaGpu(index=index, name=name or f"NVIDIA GPU at {bus.name}"))
    return driver, tuple(gpus)


def _run(command: list[str]) -> tuple[int, str]:
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError) as error:
        return 1, str(error)
    return completed.returncode, completed.stdout + completed.stderr


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no output")


def query_driver(environ=None) -> DriverReport:
    """Asks nvidia-smi (on PATH now), then the proc folder; never raises."""
    environ = os.environ if environ is None else environ
    smi = shutil.which("nvidia-smi", path=environ.get("PATH", os.defpath)) or ""
    error = ""
    if smi:
        for fields in (QUERY_FIELDS, QUERY_FIELDS[:-1]):
            status, out = _run(
                [smi, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
            )
            driver, gpus = parse_query(out, fields) if status == 0 else ("", ())
            if gpus:
                return DriverReport(gpus, driver, "nvidia-smi", smi)
            error = error or _first_line(out)
            if "compute_cap" not in out:
                break
        status, out = _run([smi, "-L"])
        if status == 0 and (gpus := parse_list(out)):
            return DriverReport(gpus, "", "nvidia-smi", smi)
    folder = Path(settings.read(PROC_ENV, environ))
    driver, gpus = parse_proc(folder)
    return DriverReport(gpus, driver, str(folder) if gpus else "", smi, error)
