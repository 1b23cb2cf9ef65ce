"""What stops TensorFlow from using this machine's NVIDIA GPUs, each as one sentence with its fix:
`gather_facts` collects what the driver, the build, the wheels and the loader say; `diagnose` turns
them into `Problem` records (catalogue `doctor.*` messages). No TensorFlow."""

from __future__ import annotations

import ctypes
import dataclasses
import importlib.metadata
import importlib.util
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from hierlstm.hardware.gpu import (
    TF_2_21_CUDA_TARGETS,
    TOOLKIT_DRIVER,
    capability_support,
    cuda_major_minor,
    driver_too_old,
    oldest_capability,
    version_tuple,
    visible_driver_gpus,
)
from hierlstm.hardware.nvidia import DriverReport, query_driver
from hierlstm.i18n import t

# The libraries TensorFlow's CUDA 12 build opens, in dependency order, with the folder of the
# nvidia-*-cu12 wheel (site-packages/nvidia/<folder>/lib) that ships each; libcuda.so.1 comes
# with the driver. Sonames of the wheels TF 2.21's and-cuda extra pins (cuBLAS 12, cuFFT 11,
# cuSOLVER 11, cuSPARSE 12, nvJitLink 12); cuDNN's major is the build's.
CUDA12_LIBRARIES = (
    ("libcuda.so.1", ""),
    ("libcudart.so.12", "cuda_runtime"),
    ("libnvJitLink.so.12", "nvjitlink"),
    ("libcublasLt.so.12", "cublas"),
    ("libcublas.so.12", "cublas"),
    ("libcusparse.so.12", "cusparse"),
    ("libcufft.so.11", "cufft"),
    ("libcusolver.so.11", "cusolver"),
)


@dataclasses.dataclass(frozen=True)
class Problem:
    """One mismatch: catalogue key `doctor.reason.<kind>` (under `doctor.cannot_use` when the
    GPU is unusable) or `doctor.warning.<kind>`, its fix `doctor.fix.<kind>`, the values both
    take, and the names of the GPUs it is about."""

    kind: str
    severity: str  # "unusable" or "warning"
    values: Mapping[str, str]
    gpus: tuple[str, ...] = ()

    def subject(self, lang: str = "en") -> str:
        """ "an NVIDIA H100 80GB HBM3", "2 NVIDIA GPUs (...)": what the problem is about."""
        return _subject(self.gpus, lang) if self.gpus else ""

    def sentence(self, lang: str = "en") -> str:
        subject = self.subject(lang)
        if self.severity == "unusable":
            reason = t(f"doctor.reason.{self.kind}", lang, subject=subject, **self.values)
            several = ".many" if len(self.gpus) > 1 else ""
            text = t(f"doctor.cannot_use{several}", lang, subject=subject, reason=reason)
        else:
            text = t(f"doctor.warning.{self.kind}", lang, subject=subject, **self.values)
        if subject and text.startswith(subject):  # "an NVIDIA ..." opens the sentence
            text = text[:1].upper() + text[1:]
        return text

    def headline(self, lang: str = "en") -> str:
        """The unusable GPU without the reason, for a narrow place (the sidebar)."""
        several = ".many" if len(self.gpus) > 1 else ""
        text = t(f"doctor.cannot_use.headline{several}", lang, subject=self.subject(lang))
        return text[:1].upper() + text[1:]

    def fix(self, lang: str = "en") -> str:
        return t(f"doctor.fix.{self.kind}", lang, **self.values)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "gpus": list(self.gpus),
            "message": self.sentence(),
            "fix": self.fix(),
            "values": dict(self.values),
        }


def _subject(names: Sequence[str], lang: str) -> str:
    if len(names) == 1:
        name = names[0]
        an = name.startswith("NVIDIA") or name[:1].upper() in "AEIOU"
        return t("doctor.subject.an" if an else "doctor.subject.a", lang, name=name)
    counts = {name: names.count(name) for name in names}
    listed = ", ".join(
        name if count == 1 else f"{count} × {name}" for name, count in counts.items()
    )
    return t("doctor.subject.many", lang, count=len(names), names=listed)


@dataclasses.dataclass(frozen=True)
class GpuFacts:
    """What the diagnosis looks at, gathered once (`gather_facts`) so `diagnose` is pure."""

    driver: DriverReport
    tensorflow: str  # version
    cuda_build: bool
    cuda_version: str  # CUDA TensorFlow was built with ("" without)
    cudnn_version: str
    cuda_targets: tuple[str, ...]  # the build's compute capabilities, e.g. ("sm_60", ...)
    visible_gpus: int  # the GPUs TensorFlow lists
    missing_packages: tuple[str, ...] = ()  # the and-cuda wheels that are not installed
    unloadable: tuple[str, ...] = ()  # the CUDA libraries this process cannot open
    cuda_visible_devices: str | None = None
    platform: str = "linux"  # sys.platform


def and_cuda_packages(distribution: str = "tensorflow") -> tuple[str, ...]:
    """The wheels of TensorFlow's `and-cuda` extra, from its installed metadata."""
    try:
        requirements = importlib.metadata.requires(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return ()
    extra = re.compile(r"""extra\s*==\s*["']and-cuda["']""")
    return tuple(
        re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)
        for requirement in requirements
        if extra.search(requirement)
    )


def missing_packages(names: Sequence[str]) -> tuple[str, ...]:
    missing = []
    for name in names:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(name)
    return tuple(missing)


def _nvidia_wheel_folders() -> list[Path]:
    spec = importlib.util.find_spec("nvidia")
    return [Path(folder) for folder in (spec.submodule_search_locations or [])] if spec else []


def unloadable_libraries(cuda_version: str, cudnn_version: str) -> tuple[str, ...]:
    """The CUDA libraries of TensorFlow's build that this process cannot open, where TensorFlow
    looks for them: the and-cuda wheels' folders (its RPATH), then the system's search path."""
    cuda = cuda_major_minor(cuda_version)
    if not cuda or cuda[0] != 12:
        return ()
    cudnn = version_tuple(cudnn_version)[:1]
    libraries = [*CUDA12_LIBRARIES, *([(f"libcudnn.so.{cudnn[0]}", "cudnn")] if cudnn else [])]
    folders, failed = _nvidia_wheel_folders(), []
    for soname, wheel in libraries:
        candidates = [folder / wheel / "lib" / soname for folder in folders if wheel]
        paths = [str(path) for path in candidates if path.exists()] or [soname]
        try:
            ctypes.CDLL(paths[0], mode=ctypes.RTLD_GLOBAL)
        except OSError:
            failed.append(soname)
    return tuple(failed)


def gather_facts(report, environ: Mapping[str, str] | None = None) -> GpuFacts:
    """The facts about this process: `report` is `hierlstm.hardware.devices.device_report()`;
    nvidia-smi runs now. The libraries are tried only when a GPU is there and TensorFlow lists
    none (opening CUDA libraries in a working process would only cost memory)."""
    environ = os.environ if environ is None else environ
    driver = query_driver(environ)
    stuck = driver.present and not report.gpus and report.cuda_build
    packages = and_cuda_packages() if stuck else ()
    return GpuFacts(
        driver=driver,
        tensorflow=report.tensorflow,
        cuda_build=report.cuda_build,
        cuda_version=report.cuda_version,
        cudnn_version=report.cudnn_version,
        cuda_targets=tuple(getattr(report, "cuda_targets", ()) or TF_2_21_CUDA_TARGETS),
        visible_gpus=len(report.gpus),
        missing_packages=missing_packages(packages),
        unloadable=unloadable_libraries(report.cuda_version, report.cudnn_version) if stuck else (),
        cuda_visible_devices=environ.get("CUDA_VISIBLE_DEVICES"),
        platform=sys.platform,
    )


def _requirement(tensorflow: str) -> str:
    parts = version_tuple(tensorflow)
    series = f"=={parts[0]}.{parts[1]}.*" if len(parts) >= 2 else ""
    return f"tensorflow[and-cuda]{series}"


def _shown_python() -> str:
    """This interpreter for a fix command: relative (".venv/bin/python") when it lies under the
    working folder, as a user of `make run` types it, else its absolute path."""
    python = sys.executable or "python3"
    relative = os.path.relpath(python) if os.path.isabs(python) else python
    return python if relative.startswith("..") else relative


def diagnose(facts: GpuFacts) -> tuple[Problem, ...]:
    """Every mismatch between the NVIDIA GPUs present and what TensorFlow can use (none when
    the driver reports no GPU: a CPU machine has nothing to fix)."""
    driver, problems = facts.driver, []
    if driver.error and not driver.source:
        problems.append(Problem("smi_failed", "warning", {"error": driver.error}))
    if not driver.present:
        return tuple(problems)
    names = tuple(gpu.name for gpu in driver.gpus)
    values = {
        "tensorflow": facts.tensorflow,
        "requirement": _requirement(facts.tensorflow),
        "python": _shown_python(),
        "cuda": facts.cuda_version or "?",
        "cudnn": facts.cudnn_version or "?",
        "driver": driver.driver_version or "?",
        "targets": ", ".join(facts.cuda_targets) or "?",
        "platform": facts.platform,
    }

    def unusable(kind: str, gpus=names, **extra):
        problems.append(Problem(kind, "unusable", {**values, **extra}, tuple(gpus)))

    minimum = driver_too_old(driver.driver_version, facts.cuda_version)
    if facts.visible_gpus == 0:
        before = len(problems)
        hidden = facts.cuda_visible_devices
        if not facts.cuda_build:  # nothing else matters until the build has CUDA
            unusable("no_cuda_build")
        else:
            visible = {"CUDA_VISIBLE_DEVICES": hidden} if hidden is not None else {}
            if not visible_driver_gpus(driver.gpus, visible):
                unusable("hidden", value=f"'{hidden}'")
            if minimum:
                unusable("old_driver", minimum=minimum, cuda_major=facts.cuda_version.split(".")[0])
            if facts.missing_packages:
                unusable("missing_packages", packages=", ".join(facts.missing_packages))
            if "libcuda.so.1" in facts.unloadable:
                unusable("no_libcuda")
            others = [name for name in facts.unloadable if name != "libcuda.so.1"]
            if others and not facts.missing_packages:
                unusable("unloadable", libraries=", ".join(others))
        supports = [
            capability_support(gpu.compute_capability, facts.cuda_targets) for gpu in driver.gpus
        ]
        if len(problems) == before and not all(support == "none" for support in supports):
            unusable("unknown")  # (unsupported GPUs alone explain it: TensorFlow ignores them)
    for gpu in driver.gpus:
        support = capability_support(gpu.compute_capability, facts.cuda_targets)
        capability = ".".join(map(str, gpu.compute_capability or ()))
        gpu_values = {**values, "capability": capability}
        if support == "none":
            minimum_capability = oldest_capability(facts.cuda_targets)
            unusable("capability", (gpu.name,), capability=capability, minimum=minimum_capability)
        elif support == "ptx":
            kinds = {"ptx": "compute_", "binaries": "sm_"}
            listed = {
                name: ", ".join(target for target in facts.cuda_targets if target.startswith(start))
                for name, start in kinds.items()
            }
            problems.append(Problem("ptx_jit", "warning", {**gpu_values, **listed}, (gpu.name,)))
            needed = TOOLKIT_DRIVER.get(cuda_major_minor(facts.cuda_version) or (0, 0), "")
            old = version_tuple(driver.driver_version) < version_tuple(needed)
            if needed and version_tuple(driver.driver_version) and old:
                extra = {**gpu_values, "toolkit_driver": needed}
                problems.append(Problem("ptx_old_driver", "warning", extra, (gpu.name,)))
    return tuple(problems)


def any_unusable(problems: Sequence[Problem]) -> bool:
    return any(problem.severity == "unusable" for problem in problems)
