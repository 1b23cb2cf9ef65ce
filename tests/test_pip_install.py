"""`pip install .` from a clone (the files git lists, non-editable, into a fresh venv that sees
this checkout's venv through a .pth file, no download): the library, its data, the `hierlstm`
command and `hierlstm app` serving the installed app, each run outside the checkout."""

import os
import re
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from hierlstm.registry import VARIANTS

ROOT = Path(__file__).resolve().parents[1]


def requirement_lines(name: str) -> list[str]:
    """A requirements file's own pins: no comments, no `-r` of another file."""
    lines = (line.split("#", 1)[0].strip() for line in (ROOT / name).read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-r")]


def test_pyproject_pins_are_the_requirements_files():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == requirement_lines("requirements.txt")
    extras = project["optional-dependencies"]
    assert extras["backends"] == requirement_lines("requirements-backends.txt")
    assert extras["gpu"] == requirement_lines("requirements-gpu.txt")
    assert extras["notebook"] == requirement_lines("requirements-notebook.txt")
    assert extras["runtimes"] == requirement_lines("requirements-runtimes.txt")


def _environment(home: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
    }
    env["HOME"] = str(home)  # Streamlit's and hierlstm's files of a user, not the tester's
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(the fresh venv, its environment, a folder outside the checkout to run in)."""
    base = tmp_path_factory.mktemp("pip-install")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    clone = base / "clone"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = clone / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "shared-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = _environment(base / "home")
    (base / "home").mkdir()
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps"]
    pip += ["--no-build-isolation", "--no-index", "--disable-pip-version-check", str(clone)]
    completed = subprocess.run(pip, cwd=base, env=env, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return venv, env, base


def run_in(installed, program: str, *arguments: str) -> str:
    """`program` of the fresh venv (python, hierlstm) run outside the checkout; its stdout, once
    it exited 0."""
    venv, env, outside = installed
    command = [str(venv / "bin" / program), *arguments]
    completed = subprocess.run(command, cwd=outside, env=env, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_the_library_and_its_data_come_from_the_fresh_venv(installed):
    venv = installed[0]
    code = (
        "import hierlstm, hierlstm.i18n as i18n; print(hierlstm.__file__);"
        "print(i18n.t('variant.fused.title'))"
    )
    stdout = run_in(installed, "python", "-c", code)
    location, title = stdout.splitlines()[:2]
    assert Path(location).is_relative_to(venv), location
    assert title and title != "variant.fused.title"  # the catalogue's TOML files are installed
    package = Path(location).parent
    installed_modules = {str(path.relative_to(package)) for path in package.rglob("*.py")}
    ours = {str(path.relative_to(ROOT / "hierlstm")) for path in (ROOT / "hierlstm").rglob("*.py")}
    assert ours <= installed_modules, sorted(ours - installed_modules)
    app_files = ("app.py", "streamlit_app.py", "app_pages/shape_trace.py", ".streamlit/config.toml")
    for name in app_files:
        assert (package / "serve" / name).is_file(), name
    assert (package / "app" / "icon.png").is_file()


def test_the_hierlstm_command_lists_every_variant(installed):
    stdout = run_in(installed, "hierlstm", "variants")
    for name in VARIANTS:
        assert re.search(rf"\b{name}\b", stdout), name


def test_the_app_command_imports_no_tensorflow_before_streamlit(installed):
    venv = installed[0]
    code = (
        "import sys; from hierlstm.cli import main; from hierlstm.cli.serve import "
        "streamlit_command; print(streamlit_command(['--x'])[-2]);"
        "print(sorted({'tensorflow', 'keras'} & set(sys.modules)))"
    )
    stdout = run_in(installed, "python", "-c", code)
    script, imported = stdout.splitlines()[:2]
    assert Path(script).is_relative_to(venv) and script.endswith("hierlstm/serve/app.py")
    assert imported == "[]"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_hierlstm_app_serves_the_installed_app(installed):
    venv, env, outside = installed
    port = _free_port()
    # The warm-up waits for a file that never comes: the server starts without TensorFlow.
    env = {**env, "HIERLSTM_WARMUP_AFTER": str(outside / "never")}
    command = [str(venv / "bin" / "hierlstm"), "app", "--server.port", str(port)]
    command += ["--server.headless", "true", "--server.address", "127.0.0.1"]
    server = subprocess.Popen(
        command,
        cwd=outside,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        answer, deadline = None, time.monotonic() + 90
        while answer != "ok" and time.monotonic() < deadline:
            assert server.poll() is None, server.stdout.read()
            try:
                url = f"http://127.0.0.1:{port}/_stcore/health"
                with urllib.request.urlopen(url, timeout=2) as response:
                    answer = response.read().decode()
            except OSError:
                time.sleep(0.3)
        assert answer == "ok"
        # The command became Streamlit's process (exec), serving the installed app.py.
        arguments = Path(f"/proc/{server.pid}/cmdline").read_bytes().decode().split("\0")
        served = Path(arguments[arguments.index("run") + 1])
        assert served.is_relative_to(venv) and served.parts[-3:] == ("hierlstm", "serve", "app.py")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
