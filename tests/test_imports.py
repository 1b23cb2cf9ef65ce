import subprocess
import sys

CORE_MODULES = [
    "config",
    "registry",
    "model.params",
    "model.builders",
    "model.layers",
    "model.reference",
    "model.trace",
    "model.cost",
    "model.check",
    "model.pitfalls",
    "cli",
    "timing.records",
    "results.store",
]


def test_core_imports_without_streamlit():
    imports = "; ".join(f"import hierlstm.{name}" for name in CORE_MODULES)
    code = f"{imports}; import sys; print('streamlit' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.strip() == "False"


def test_import_hierlstm_is_lazy():
    code = "import hierlstm, sys; print('tensorflow' in sys.modules)"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert completed.stdout.strip() == "False"
