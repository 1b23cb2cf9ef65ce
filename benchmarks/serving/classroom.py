"""How many visitors one server holds: Locust users that speak Streamlit's websocket protocol
(`classroom_users`), no browsers, so the machine's cores go to the server and what is
measured is its capacity. For each number of sessions, in turn on one warm server: every move's
server time (p50/p95/p99 of a page switch, a setting change, a language switch and a run), the
server's CPU and RSS, the errors, the rows stored against the runs finished, and what Streamlit's
caches and session states held after it (its /_stcore/metrics, with each object's size measured).

    .venv/bin/python -m benchmarks classroom [--sessions 1,2,4,8,16,32] [--seconds 120]
        [--last-level-seconds S]

Runs are serialised per device as always, so a run's time includes its wait for the device.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from benchmarks.record import argument_parser, header, markdown_table
from benchmarks.serving import browser, server_profile
from benchmarks.serving.streamlit_client import Session

# Locust's users, run by `locust -f` in its own process: importing Locust patches the standard
# library with gevent, which this process's threads and subprocesses must not get.
USERS_FILE = Path(__file__).with_name("classroom_users.py")
# The Locust names of the visitors' moves, as the table shows them.
OPEN, PAGE, SETTING, LANGUAGE, RUN = "open", "page switch", "setting", "language", "run"
MOVES = (PAGE, SETTING, LANGUAGE, RUN)
# What the visitors' runs look like in the server's store, told apart by time steps.
RUN_TIME_STEPS = (4, 5, 6)
RUN_VARIANTS = ("nested", "folded")
ABANDONED_TIME_STEPS = 30
SAMPLE_S = 0.5
SETTLE_S = 300  # the targets read a level's RSS after its first 5 minutes
MOVES_FILE = "HIERLSTM_CLASSROOM_MOVES"  # where the visitors write each move (a JSON line)
FINISHED = "warm-up finished after"  # the server's log line (`hierlstm.app.server.warmup`)
# Streamlit's metrics then size every cached object and session state, not just count them.
MEMORY_STATS = {"STREAMLIT_SERVER_ENABLE_EXPENSIVE_MEMORY_STATS": "true"}
CACHE_LINE = re.compile(r'^cache_memory_bytes\{cache_type="([^"]*)",cache="([^"]*)"\} (\d+)$')


def warm(url: str, timeout_s: float = browser.SERVER_START_TIMEOUT_S) -> float:
    """Seconds until a new session's page is the page, not the warm-up's placeholder."""
    start = time.perf_counter()
    while True:
        session = Session(url)
        try:
            if not session.rerun().warming_up:
                return time.perf_counter() - start
        finally:
            session.close()
        if time.perf_counter() - start > timeout_s:
            raise RuntimeError(f"the server was still warming up after {timeout_s:.0f} s")
        time.sleep(1)


def finished(log: Path, timeout_s: float = 600) -> None:
    """Waits until the server's log says its warm-up has finished every step."""
    deadline = time.monotonic() + timeout_s
    while FINISHED not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server's warm-up had not finished after {timeout_s:.0f} s")
        time.sleep(0.5)


def stored_rows(database: Path) -> tuple[int, int]:
    """(rows of the visitors' tiny runs, rows of their abandoned runs) in the server's store."""
    from hierlstm.results.store import ResultStore

    if not database.exists():
        return 0, 0
    steps = ResultStore(database).rows()["time_steps"].astype(int)
    runs = int(steps.isin(RUN_TIME_STEPS).sum())
    return runs, int((steps == ABANDONED_TIME_STEPS).sum())


def cache_memory(url: str) -> dict[str, int]:
    """Bytes held per cache, as Streamlit's /_stcore/metrics reports them: each cached
    function ("inside.values_of"), the session states, the media files, the uploads."""
    request = urllib.request.Request(url + "/_stcore/metrics", headers={"Accept": "text/plain"})
    with urllib.request.urlopen(request, timeout=60) as response:
        lines = response.read().decode().splitlines()
    held = collections.Counter()
    for line in lines:
        if found := CACHE_LINE.match(line):
            kind, name, size = found.groups()
            held[".".join(name.split(".")[-2:]) if name else kind.removeprefix("st_")] += int(size)
    return dict(held)


def sampled(pid: int, done: threading.Event, samples: list) -> None:
    """(seconds, RSS MB, % of one core since the last sample) of process `pid` every SAMPLE_S."""
    last = None
    while not done.wait(SAMPLE_S):
        with contextlib.suppress(OSError, KeyError, IndexError, ValueError):
            rss, cpu, _threads = browser.process_sample(pid)
            now = time.monotonic()
            if last is not None:
                samples.append((now, rss, 100 * (cpu - last[1]) / (now - last[0])))
            last = (now, cpu)


def settled_rss(samples: list, started: float, after_s: float = SETTLE_S) -> list[int] | None:
    """[RSS at `after_s` into the level, the lowest, the highest from then on] in MB, of the
    `sampled` samples of a level begun at `started` (time.monotonic); None for a shorter level."""
    settled = [mb for at, mb, _percent in samples if at - started >= after_s]
    return [round(settled[0]), round(min(settled)), round(max(settled))] if settled else None


def _summary(moves: list[dict]) -> dict:
    import numpy as np

    quantiles = np.percentile([move["seconds"] for move in moves], [50, 95, 99])
    return {
        "count": len(moves),
        "failures": sum(bool(move["error"]) for move in moves),
        **{f"p{q}": float(value) for q, value in zip((50, 95, 99), quantiles, strict=True)},
    }


def move_stats(path: Path) -> tuple[dict[str, dict], dict[str, dict], list[str]]:
    """The visitors' moves by name and the page switches by the page they went to (count,
    failures, p50/p95/p99 seconds of all of them), and each distinct failure with its count."""
    moves = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    names = sorted({move["name"] for move in moves})
    stats = {name: _summary([move for move in moves if move["name"] == name]) for name in names}
    switches = [move for move in moves if move["name"] == PAGE]
    pages = {
        page: _summary([move for move in switches if move["page"] == page])
        for page in sorted({move["page"] for move in switches})
    }
    failed = collections.Counter(
        f"{move['name']}: {move['error']}" for move in moves if move["error"]
    )
    return stats, pages, [f"{text} (x{count})" for text, count in failed.most_common()]


def level(url: str, server_pid, database, sessions: int, seconds: float, folder: Path) -> dict:
    """`sessions` visitors for `seconds`, then until every move in flight has ended; the server's
    CPU and RSS sampled if `server_pid` is given, its rows counted if `database` is."""
    before = stored_rows(database) if database else None
    samples: list = []
    done = threading.Event()
    if server_pid:
        sampler = threading.Thread(target=sampled, args=(server_pid, done, samples), daemon=True)
        sampler.start()
    moves = folder / f"moves-{sessions}.jsonl"
    command = [
        *(sys.executable, "-m", "locust", "-f", str(USERS_FILE), "--headless"),
        *("--users", str(sessions), "--spawn-rate", str(sessions), "--host", url),
        *("--run-time", f"{seconds:.0f}s", "--stop-timeout", "600"),
        *("--only-summary", "--loglevel", "WARNING"),
    ]
    environment = {**os.environ, "PYTHONPATH": str(browser.ROOT), MOVES_FILE: str(moves)}
    # What the caches held when the RSS starts to count: beside the end's, it says how much of
    # the RSS's growth from then on is the caches' Python objects.
    settled: dict[str, int] = {}
    reader = threading.Timer(SETTLE_S, _read_caches, (url, settled))
    reader.daemon = True
    started = time.monotonic()
    if seconds > SETTLE_S:
        reader.start()
    with open(folder / f"locust-{sessions}.log", "w") as log:
        subprocess.run(command, cwd=browser.ROOT, env=environment, stdout=log, stderr=log)
    reader.cancel()
    done.set()
    if server_pid:
        sampler.join()
    after = stored_rows(database) if database else None
    stats, pages, failures = move_stats(moves)
    caches = cache_memory(url)
    runs_finished = stats.get(RUN, {"count": 0, "failures": 0})
    cpu = [percent for _at, _rss, percent in samples]
    rss = [mb for _at, mb, _percent in samples]
    return {
        "sessions": sessions,
        "moves": stats,
        "pages": pages,
        "errors": sum(move["failures"] for move in stats.values()),
        "failures": failures,
        "runs_finished": runs_finished["count"] - runs_finished["failures"],
        "rows_stored": after[0] - before[0] if database else None,
        "rows_expected": len(RUN_VARIANTS) * (runs_finished["count"] - runs_finished["failures"]),
        "abandoned_rows": after[1] - before[1] if database else None,
        "cpu_mean_pct": round(sum(cpu) / len(cpu)) if cpu else None,
        # start, the level's middle sample, end, max: flat is the second half's growth
        "rss_mb": [round(rss[0]), round(rss[len(rss) // 2]), round(rss[-1]), round(max(rss))]
        if rss
        else None,
        "rss_settled_mb": settled_rss(samples, started),
        "seconds": seconds,
        "caches_mb": {name: size / 1e6 for name, size in caches.items()},
        "caches_settled_mb": {name: size / 1e6 for name, size in settled.items()} or None,
    }


def _read_caches(url: str, into: dict) -> None:
    with contextlib.suppress(OSError):  # the table then shows no row for it
        into.update(cache_memory(url))


def died(returncode: int, sessions: int, log: Path, lines: int = 40) -> str:
    """What to say when the server exited during a level: its exit (the signal's name where one
    killed it) and the end of its log, where Python's fault handler wrote every thread's stack."""
    how = f"signal {signal.Signals(-returncode).name}" if returncode < 0 else f"status {returncode}"
    tail = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
    return "\n".join(
        [f"the server exited ({how}) during the {sessions}-session level; its log ends:", *tail]
    )


def profile_table(levels: list[dict]) -> str:
    rows = []
    for found in levels:
        phase = found.get("profile") or {"busy_s": 0.0, "lines": {}, "libraries": {}}
        lines = server_profile.top(phase["lines"], 4, source=True)
        cpu = phase.get("cpu", {})
        rows.append(
            (
                found["sessions"],
                f"{phase['busy_s']:.1f}",
                lines,
                server_profile.top(phase["libraries"], 4, False),
                f"{phase.get('cpu_s', 0.0):.1f}",
                server_profile.top(cpu, 6, source=True),
            )
        )
    head = ("sessions", "script threads s", "app lines", "libraries")
    head += ("script threads' CPU s", "where their CPU went")
    return markdown_table(head, rows)


def caches_table(levels: list[dict], before: dict[str, float] | None, shown: int = 5) -> str:
    """MB held by the caches after each level, and at a level's fifth minute where it lasted
    longer: in all, and the `shown` largest at the end."""
    last = levels[-1]["caches_mb"]
    largest = sorted(last, key=last.get, reverse=True)[:shown]
    rows = [("before", *_held(before, largest))] if before is not None else []
    for found in levels:
        if settled := found.get("caches_settled_mb"):
            rows.append(
                (f"{found['sessions']}, at {SETTLE_S / 60:g} min", *_held(settled, largest))
            )
        rows.append((found["sessions"], *_held(found["caches_mb"], largest)))
    return markdown_table(("after", "all caches MB", *largest), rows)


def _held(caches: dict[str, float], names: list[str]) -> list[str]:
    return [f"{sum(caches.values()):.1f}", *(f"{caches.get(name, 0.0):.1f}" for name in names)]


def _settled(rss: list[int] | None) -> str:
    if not rss:
        return "-"
    at, low, high = rss
    return f"{at}, {low}-{high} ({high - low})"


def markdown(
    levels: list[dict], seconds: float, warm_s: float | None, caches_before: dict | None = None
) -> str:
    def cell(found: dict, move: str) -> str:
        stats = found["moves"].get(move)
        if not stats:
            return "-"
        return f"{stats['p50']:.2f} / {stats['p95']:.2f} / {stats['p99']:.2f} ({stats['count']})"

    rows = [
        [
            found["sessions"],
            *(cell(found, move) for move in MOVES),
            found["cpu_mean_pct"],
            "{} → {} → {} (max {})".format(*found["rss_mb"]) if found["rss_mb"] else "-",
            _settled(found.get("rss_settled_mb")),
            found["errors"],
            f"{found['rows_stored'] if found['rows_stored'] is not None else '-'} / "
            f"{found['rows_expected']}",
        ]
        for found in levels
    ]
    head = ["sessions", *(f"{move} p50/p95/p99 s (n)" for move in MOVES)]
    head += ["server CPU %", "server RSS MB (start → middle → end)"]
    head += [f"RSS MB after {SETTLE_S // 60} min: then, lowest-highest (range)", "errors"]
    head += ["rows stored / expected"]
    where = (
        f"on a server whose warm-up had finished, {warm_s:.0f} s after its start"
        if warm_s
        else "on the app at --url"
    )
    lines = [
        header("A classroom: sessions on one server, without browsers"),
        f"Each level ran {seconds:.0f} s of Locust visitors (a 1-5 s pause between moves), then "
        f"until every move in flight ended, {where}"
        + (
            f"; the last level ran {levels[-1]['seconds']:.0f} s"
            if levels[-1].get("seconds", seconds) != seconds
            else ""
        )
        + ". A run's time includes its wait for the "
        "device: runs are serialised per device. Server CPU is the mean over the level in % of "
        "one core.",
        "",
        markdown_table(head, rows),
    ]
    for found in levels:
        lines += [f"- {found['sessions']} sessions: {text}" for text in found["failures"]]
    pages = sorted({page for found in levels for page in found["pages"]})
    lines += [
        "",
        "A page switch by the page it went to, p50 / p95 s (n), per number of sessions:",
        "",
        markdown_table(
            ["sessions", *pages],
            [
                [
                    found["sessions"],
                    *(
                        f"{found['pages'][page]['p50']:.2f} / {found['pages'][page]['p95']:.2f} "
                        f"({found['pages'][page]['count']})"
                        if page in found["pages"]
                        else "-"
                        for page in pages
                    ),
                ]
                for found in levels
            ],
        ),
    ]
    lines += [
        "",
        "What Streamlit's caches and the sessions' states held after each level, MB, as its "
        "/_stcore/metrics sizes each object (Python objects only: TensorFlow's buffers and "
        "the allocator's are in the RSS alone):",
        "",
        caches_table(levels, caches_before),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--sessions", default="1,2,4,8,16,32", help="levels, comma-separated")
    parser.add_argument("--seconds", type=float, default=120, help="how long each level lasts")
    parser.add_argument(
        "--last-level-seconds",
        type=float,
        help="how long the last level lasts (a class that stays: long enough to see the "
        "server's RSS level off)",
    )
    parser.add_argument(
        "--profile-server",
        action="store_true",
        help="run the server under benchmarks.serving.server_profile (a stack sampler) and print "
        "where its script threads spent each level",
    )
    parser.add_argument(
        "--url",
        help="an app already serving there, instead of a fresh server (its CPU, RSS "
        "and store are not read)",
    )
    args = parser.parse_args(argv)
    try:
        levels = [int(text) for text in args.sessions.split(",")]
    except ValueError:
        parser.error(f"--sessions must be whole numbers, comma-separated; got {args.sessions!r}")
    last_s = args.last_level_seconds or args.seconds
    if not levels or min(levels) < 1 or args.seconds <= 0 or last_s <= 0:
        parser.error("--sessions must be at least 1 each, --seconds above 0")
    durations = [args.seconds] * (len(levels) - 1) + [last_s]
    with tempfile.TemporaryDirectory(prefix="hierlstm-classroom-") as name:
        folder = Path(name)
        if args.url:
            before = cache_memory(args.url)
            found = [
                level(args.url, None, None, n, s, folder)
                for n, s in zip(levels, durations, strict=True)
            ]
            warm_s = None
        else:
            found, warm_s, before = serve_and_measure(
                levels, durations, folder, args.profile_server
            )
    before_mb = {name: size / 1e6 for name, size in before.items()}
    print(markdown(found, args.seconds, warm_s, before_mb))
    if args.profile_server:
        print(
            "\nWhere the server's script threads spent each level (a thread waiting counts), and "
            "where their CPU time went:\n"
        )
        print(profile_table(found))


def serve_and_measure(
    levels: list[int], durations: list[float], folder: Path, profiled: bool = False
):
    """The levels in turn, `durations` seconds each, on one fresh server of its own once it is
    warm; (the levels, the seconds it took to be warm, its caches before the first level).
    `profiled`: the server under `benchmarks.serving.server_profile`, a phase per level."""
    port = browser.free_port()
    url = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    environment = browser.own_store(folder) | {"XDG_DATA_HOME": str(folder / "data")}
    environment |= MEMORY_STATS | {"PYTHONFAULTHANDLER": "1"}  # a crash logs every thread's stack
    profile = folder / "profile.json" if profiled else None
    server = browser.start_server(port, folder / "server.log", environment, profile=profile)
    labels = ["warm-up"]
    try:
        browser.wait_healthy(url, server, started)
        warm(url)
        # Then its later steps (the other tabs, the sharing checks, the Your model example, the
        # cost per step), which wait for quiet pages: a teacher's server has long finished them
        # when the class arrives, and a level begun before would measure them instead.
        finished(folder / "server.log")
        warm_s = time.perf_counter() - started
        database = folder / "results.sqlite3"
        before = cache_memory(url)
        found = []
        for sessions, seconds in zip(levels, durations, strict=True):
            if profiled:  # closes the phase before this level
                server.send_signal(server_profile.PHASE_SIGNAL)
                time.sleep(0.05)  # the sampler looks every 10 ms
            try:
                found.append(level(url, server.pid, database, sessions, seconds, folder))
            except OSError:  # refused: the log, in a folder about to go, says why it died
                if server.poll() is None:
                    raise
                raise RuntimeError(
                    died(server.returncode, sessions, folder / "server.log")
                ) from None
            labels.append(f"{sessions} sessions")
        if profiled:  # closes the last level's phase
            server.send_signal(server_profile.PHASE_SIGNAL)
            time.sleep(0.5)
    finally:
        browser.stop(server)
    if profiled:
        for found_level, phase in zip(
            found, list(server_profile.phases(profile, labels).values())[1:], strict=False
        ):
            found_level["profile"] = phase
    if tracebacks := browser.tracebacks((folder / "server.log").read_text()):
        print(f"classroom: the server logged {len(tracebacks)} traceback(s)", file=sys.stderr)
        print(tracebacks[0], file=sys.stderr)
    return found, warm_s, before


if __name__ == "__main__":
    main()
