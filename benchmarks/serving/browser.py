"""The app headless and Debian's Chromium: what the browser tests and benchmarks share. A
server is `streamlit run app.py` on a loopback port, with its output in one log file, which says
when a page's script run ended (`RunEnd`). Imports neither TensorFlow nor Playwright, so a test can
check `CHROMIUM` before it skips."""

from __future__ import annotations

import datetime
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from hierlstm.i18n import MESSAGES

ROOT = Path(__file__).resolve().parents[2]  # the repository
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
VIEWPORT = {"width": 1400, "height": 1000}  # wide enough that every top link is shown
SERVER_START_TIMEOUT_S = 180
# hierlstm.app.runs.RUN_ENDED, as app.py's log handler writes it: the time, then the page.
RUN_ENDED = re.compile(
    rb"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*script run ended: page=(\S+) session=", re.M
)


def free_port(port: int = 0) -> int:
    """`port` if nothing listens on it (else ValueError), or any free port for 0: a health
    check answered by another engineer's server would time the wrong one."""
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise ValueError(f"--port {port}: {error.strerror}; choose a free port") from None
        return probe.getsockname()[1]


def start_server(
    port: int,
    log: Path,
    environment: dict[str, str],
    script: str = "app.py",
    profile: Path | None = None,
) -> subprocess.Popen:
    """`streamlit run script` headless on 127.0.0.1:`port` with `environment` over this process's,
    its output in `log`; no file watcher, so saving a file does not reload it mid-run. `profile`:
    under `benchmarks.serving.server_profile`, which writes that file when it exits."""
    runner = (
        ("-m", "benchmarks.serving.server_profile", str(profile))
        if profile
        else ("-m", "streamlit")
    )
    command = [
        *(sys.executable, *runner, "run", script),
        *("--server.headless", "true"),
        *("--server.port", str(port)),
        *("--server.address", "127.0.0.1"),
        *("--browser.gatherUsageStats", "false"),
        *("--server.fileWatcherType", "none"),
    ]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **environment}
    with open(log, "w") as output:
        return subprocess.Popen(
            command, cwd=ROOT, env=environment, stdout=output, stderr=subprocess.STDOUT
        )


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def wait_healthy(
    url: str,
    process: subprocess.Popen,
    started: float,
    timeout_s: float = SERVER_START_TIMEOUT_S,
    poll_s: float = 0.05,
) -> float:
    """Seconds from `started` (perf_counter at the process start) to the first 200 from
    /_stcore/health; RuntimeError if the server exits or is not healthy within `timeout_s`."""
    while not healthy(url):
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode} before it was healthy")
        if time.perf_counter() - started > timeout_s:
            raise RuntimeError(f"streamlit not healthy after {timeout_s:.0f} s")
        time.sleep(poll_s)
    return time.perf_counter() - started


def process_sample(pid: int) -> tuple[float, float, int]:
    """(RSS MB, CPU seconds, threads) of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    status = dict(line.split(":", 1) for line in lines)
    return int(status["VmRSS"].split()[0]) / 1024, cpu, int(status["Threads"])


def stop(process: subprocess.Popen) -> None:
    """Terminate, then kill after 15 s."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


def launch_chromium(playwright):
    """Debian's Chromium (no browser download) with the project's flags, from a running
    `sync_playwright()`."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))


def stored_pattern(lang: str) -> re.Pattern:
    """The Benchmark page's "N result(s) stored in PATH." line, N captured."""
    before, after = MESSAGES["bench.stored"][lang].split("{path}")[0].split("{count}")
    return re.compile(re.escape(before) + r"(\d+)" + re.escape(after))


def confirm_button(page):
    """The Run button of the app's question before a long run, as a Playwright locator: its label
    in either language, either form."""
    labels = []
    for lang in ("en", "zh"):
        labels.append(re.escape(MESSAGES["run.confirm.yes"][lang].split("{")[0]))
        labels.append(re.escape(MESSAGES["run.confirm.yes.unknown"][lang]) + "$")
    return page.get_by_role("button", name=re.compile(f"^({'|'.join(labels)})"))


def own_store(folder: Path) -> dict[str, str]:
    """The environment that gives a server its own results file and lock folder in `folder`,
    so no other run on the machine queues with it."""
    return {
        "HIERLSTM_DB": str(folder / "results.sqlite3"),
        "HIERLSTM_LOCK_DIR": str(folder / "locks"),
    }


class RunEnd:
    """A script run of `page` (its name in hierlstm.app.pages) that ends from now on, as the
    server's `log` says: any session's run of that page, since the log names no session."""

    def __init__(self, log: Path, page: str):
        self.log, self.page = log, page
        self.restart()

    def restart(self) -> None:
        """Only runs that end after this call count."""
        self.offset = self.log.stat().st_size

    def skip(self) -> None:
        """The run found was not the one waited for: only runs logged after it count."""
        self.offset = self._first()[1] or self.offset

    def seen_ms(self) -> float | None:
        """When (ms since the epoch, the log's own time) the first such run ended; None if
        none has yet."""
        return self._first()[0]

    def _first(self) -> tuple[float | None, int | None]:
        with open(self.log, "rb") as log:
            log.seek(self.offset)
            text = log.read()
        for match in RUN_ENDED.finditer(text):
            if match[2].decode() == self.page:
                moment = datetime.datetime.strptime(match[1].decode(), "%Y-%m-%d %H:%M:%S,%f")
                return moment.timestamp() * 1000, self.offset + match.end()
        return None, None


ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = " │╭╰─"  # Streamlit draws an uncaught exception's traceback in a box (rich)


def tracebacks(log: str) -> list[str]:
    """Every traceback in a server's log (or a command's output), plain or in Streamlit's box:
    from its first line to the exception's line; a chained one is one more."""
    found, block = [], None
    for line in ANSI.sub("", log).splitlines():
        if block is None:
            block = [line] if "Traceback (most recent call last)" in line else None
            continue
        block.append(line)
        if line and line[0] not in BOX and not line.startswith("Traceback"):
            found.append("\n".join(block))
            block = None
    return found
