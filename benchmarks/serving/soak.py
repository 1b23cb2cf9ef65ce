"""Soak: many visitors for minutes on one server, a CLI loop and a second server beside them.

    .venv/bin/python -m benchmarks soak [--sessions 4] [--minutes 10] [--seed N] [--port PORT]
                                        [--cli-every 30] [--warmup full] [--artifacts DIR]
                                        [--json PATH]

What a demo that runs all afternoon meets, modelled on Streamlit's Playwright load tests: in one
temporary folder, servers A and B; `--sessions` visitors, each its own process and Chromium,
walking at random from a printed seed (`benchmarks.serving.walk`); `python -m hierlstm bench` every
`--cli-every` seconds; each server's RSS, CPU and threads sampled. Each kind of run has its own
time steps (`walk.TIME_STEPS`), so the stored rows can be counted against the runs that finished.

Exits 1 on a stall, an exception element or error alert, a traceback, a failed move, or stored
rows that differ from the runs finished. RSS and the p95 page switch are reported against their
targets, not in the exit status: they measure the machine as much as the app.
"""

from __future__ import annotations

import collections
import contextlib
import json
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.record import argument_parser, git_commit, load_average, markdown_table
from benchmarks.serving import browser, visit, walk

WARM_S, RUN_S = browser.SERVER_START_TIMEOUT_S, visit.RUN_TIMEOUT_S
SAMPLE_S = 0.5
RSS_AFTER_S, RSS_BAND_MB, SWITCH_P95_S = 300, 50, 1.5
CLI_RUN = f"bench --variant folded --batch-size 1 --time-steps {walk.TIME_STEPS['cli'][0]}"
CLI_RUN += " --repeats 2 --warmup 1"


# --- beside the visitors: the servers' samples, the CLI loop -----------------------------------


def sample(servers: dict, start: float, done: threading.Event, rows: list) -> None:
    """Every SAMPLE_S: each server's RSS, CPU (% of one core since the last sample), threads."""
    last = {}
    while not done.wait(SAMPLE_S):
        now = time.monotonic()
        for name, process in servers.items():
            with contextlib.suppress(OSError, KeyError, IndexError, ValueError):
                rss, cpu, threads = browser.process_sample(process.pid)
                if name in last:
                    percent = round(100 * (cpu - last[name][1]) / (now - last[name][0]))
                    rows.append((round(now - start, 2), name, round(rss, 1), percent, threads))
                last[name] = (now, cpu)


def cli_loop(every_s: float, start: float, done: threading.Event, runs: list, warm: Path) -> None:
    """`python -m hierlstm bench` at a tiny size every `every_s`, once `warm` exists (a visitor
    found the server warm), so the CLI's TensorFlow import does not slow the servers' own."""
    while not warm.exists():
        if done.wait(SAMPLE_S):
            return
    while not done.wait(every_s):
        began, command = time.monotonic(), [sys.executable, "-m", "hierlstm", *CLI_RUN.split()]
        try:
            ran = subprocess.run(command, cwd=browser.ROOT, capture_output=True, timeout=RUN_S)
            code, output = ran.returncode, (ran.stdout + ran.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired:
            code, output = None, f"timed out after {RUN_S} s"
        seconds, kept = time.monotonic() - began, code != 0 or "Traceback" in output
        run = {"at_s": round(began - start, 2), "seconds": round(seconds, 2), "returncode": code}
        run |= {"waited": "waiting for another run" in output}
        runs.append(run | {"output": output[-3000:] if kept else ""})


# --- the report --------------------------------------------------------------------------------


def percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return f"{p50:.2f} / {p95:.2f} / {p99:.2f} ({len(values)})"


def rows_by_kind(database: Path) -> dict[str, int]:
    from hierlstm.results.store import ResultStore

    steps = ResultStore(database).rows()["time_steps"].astype(int)
    counts = {kind: int(steps.isin(values).sum()) for kind, values in walk.TIME_STEPS.items()}
    return counts | {"other": len(steps) - sum(counts.values())}


def report(steps: list[dict], cli: list[dict], rows: dict, samples: list, logs: dict) -> dict:
    """The report's figures, and the correctness targets that failed."""
    visits = [step for step in steps if step["kind"] != "failed"]
    runs = [step for step in visits if step["kind"] == "run"]
    finished = [step for step in runs if step["stored"] is not None]
    expected, said = (sum(step[key] for step in finished) for key in ("expected", "stored"))
    texts = [*logs.items(), *(("CLI", run["output"]) for run in cli)]
    traces = collections.Counter(
        (name, t) for name, text in texts for t in browser.tracebacks(text)
    )

    def seconds(*kinds):
        return [s["seconds"] for s in visits if s["kind"] in kinds and s["seconds"] is not None]

    rss = [rss for at, name, rss, *_ in samples if name == "A" and at >= RSS_AFTER_S]
    result = {
        "visits_by_kind": collections.Counter(step["kind"] for step in visits),
        "visits_by_page_and_language": collections.Counter(
            f"{s['page']} {s['lang']}" for s in visits
        ),
        "server_B_visits": sum(step["server"] == "B" for step in visits),
        "stalls": [step for step in visits if step["stalled"]],
        "errors": sorted({(s["page"], s["lang"], text) for s in visits for text in s["errors"]}),
        "failed_steps": [step for step in steps if step["kind"] == "failed"],
        "tracebacks": [[name, text, count] for (name, text), count in traces.items()],
        "runs_pressed": len(runs),
        "runs_pressed_twice": sum(step["pressed"] == "twice" for step in runs),
        "runs_finished": len(finished),
        "app_rows_expected": expected,
        "app_rows_said_stored": said,
        "cli_runs": len(cli),
        "cli_runs_ok": sum(run["returncode"] == 0 for run in cli),
        "cli_lock_waits": sum(run["waited"] for run in cli),
        "rows": rows,
        "times": {
            "load (URL, new session)": percentiles(seconds("url", "export")),
            "page switch (top navigation)": percentiles(seconds("link")),
            "rerun (language, setting)": percentiles(seconds("language", "setting")),
            "run (Run pressed to idle)": percentiles(seconds("run")),
        },
        "switch_p95_s": float(np.percentile(seconds("link"), 95)) if seconds("link") else None,
        "rss_after_5_min_mb": [rss[0], min(rss), max(rss)] if rss else None,
        "server_samples": len(samples),
    }
    counts = {
        "stall(s)": len(result["stalls"]),
        "exception element(s) or error alert(s)": len(result["errors"]),
        "traceback(s)": traces.total(),
        "move(s) that failed": len(result["failed_steps"]),
        "CLI run(s) failed": result["cli_runs"] - result["cli_runs_ok"],
        "row(s) of no run the soak made": rows["other"],
    }
    failures = [f"{count} {what}" for what, count in counts.items() if count]
    if not rows["app"] == said == expected:
        failures.append(f"app rows stored {rows['app']}, said stored {said}, expected {expected}")
    if rows["cli"] != result["cli_runs_ok"]:
        failures.append(f"CLI rows stored {rows['cli']}, CLI runs ok {result['cli_runs_ok']}")
    return result | {"failures": failures}


def markdown(result: dict) -> str:
    rss, rows, p95 = result["rss_after_5_min_mb"], result["rows"], result["switch_p95_s"]
    pairs = lambda counts: ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))  # noqa: E731
    lines = [
        f"- seed {result['seed']}; {result['sessions']} sessions for {result['minutes']} min "
        f"(they took {result['walked_s']:.0f} s, warm-up included), CLI every "
        f"{result['cli_every']} s, warm-up {result['warmup']}; commit {result['commit']}; load "
        f"average {result['load_before']} before, {result['load_after']} after",
        f"- visits: {sum(result['visits_by_kind'].values())} ({pairs(result['visits_by_kind'])}); "
        f"server B {result['server_B_visits']}",
        f"- by page and language: {pairs(result['visits_by_page_and_language'])}",
        f"- stalls (not idle in {walk.STALL_S} s): {len(result['stalls'])}; exception elements "
        f"and error alerts: {len(result['errors'])}; tracebacks: {len(result['tracebacks'])}; "
        f"moves that failed: {len(result['failed_steps'])}",
        f"- runs pressed {result['runs_pressed']} ({result['runs_pressed_twice']} twice), finished "
        f"{result['runs_finished']}: rows expected {result['app_rows_expected']}, said stored "
        f"{result['app_rows_said_stored']}, stored {rows['app']}",
        f"- CLI runs {result['cli_runs']} ({result['cli_runs_ok']} ok, {result['cli_lock_waits']} "
        f"waited for the device): rows stored {rows['cli']}; rows of abandoned runs "
        f"{rows['abandoned']}; other rows {rows['other']}",
        "- server A's RSS after the first 5 min: "
        + (f"{rss[0]:.0f} MB, then {rss[1]:.0f}-{rss[2]:.0f} MB" if rss else "not reached")
        + f" (target within +-{RSS_BAND_MB} MB); p95 page switch: "
        + (f"{p95:.2f} s" if p95 is not None else "-")
        + f" (target <= {SWITCH_P95_S} s)",
        "",
        markdown_table(("seconds", "p50 / p95 / p99 (count)"), list(result["times"].items())),
    ]
    for stall in result["stalls"]:
        recovered = stall["recovered_s"]
        lines.append(
            f"- stall: session {stall['session']} step {stall['number']} {stall['kind']} "
            f"{stall['page']} {stall['lang']} server {stall['server']} at {stall['at_s']:.0f} s; "
            f"{f'idle after {recovered:.1f} s' if recovered else 'never idle'}; "
            f"last seen: {stall['waiting_for']}"
        )
    lines += [f"- error on {page} {lang}: {text[:300]}" for page, lang, text in result["errors"]]
    lines += [f"- move failed: session {s['session']}: {s['note']}" for s in result["failed_steps"]]
    for name, text, count in result["tracebacks"]:
        lines.append(f"- traceback in {name}'s log x{count}:\n\n```\n{text}\n```")
    lines += ["", "FAILED: " + "; ".join(result["failures"]) if result["failures"] else "PASSED"]
    return "\n".join(lines)


# --- the soak ----------------------------------------------------------------------------------


def soak(args, folder: Path) -> dict:
    """Servers A and B, the visitors and the CLI loop, in `folder`; the report's figures."""
    ports = {"A": browser.free_port(args.port), "B": browser.free_port()}
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    logs = {name: folder / f"server-{name}.log" for name in ports}
    servers, children, threads, samples, cli = {}, [], [], [], []
    done, load_before = threading.Event(), load_average()
    try:
        for name, port in ports.items():
            servers[name] = browser.start_server(port, logs[name], {})
        for name, process in servers.items():
            browser.wait_healthy(urls[name], process, time.perf_counter())
        start, walk_s = time.monotonic(), args.minutes * 60
        # fork, while no thread runs yet: each visitor starts with this process's imports.
        forking = multiprocessing.get_context("fork")
        for number in range(args.sessions):
            walker = (number, args.sessions, urls, logs, args.seed, folder, start, walk_s)
            children.append(forking.Process(target=walk.session, args=walker))
            children[-1].start()
        warm = folder / "session-0.jsonl"
        threads.append(threading.Thread(target=sample, args=(servers, start, done, samples)))
        threads.append(
            threading.Thread(target=cli_loop, args=(args.cli_every, start, done, cli, warm))
        )
        for thread in threads:
            thread.start()
        for child in children:  # the warm-up, the walk, its last run and a stall's recovery
            last_s = WARM_S + walk_s + RUN_S + walk.RECOVER_S
            child.join(max(1.0, start + last_s - time.monotonic()))
        walked_s = time.monotonic() - start
    finally:
        done.set()
        for child in children:
            if child.is_alive():
                child.terminate()
                child.join(timeout=15)
        for thread in threads:
            thread.join(timeout=RUN_S)
        for process in servers.values():
            browser.stop(process)
    sessions = [folder / f"session-{number}.jsonl" for number in range(args.sessions)]
    steps = [json.loads(line) for log in sessions if log.exists() for line in log.open()]
    texts = {f"server {name}": log.read_text() for name, log in logs.items()}
    result = report(steps, cli, rows_by_kind(folder / "results.sqlite3"), samples, texts)
    if unended := [number for number, child in enumerate(children) if child.exitcode != 0]:
        result["failures"].append(f"session(s) {unended} did not end by themselves")
    meta = {key: getattr(args, key) for key in ("seed", "sessions", "minutes", "cli_every")}
    meta |= {"warmup": args.warmup, "walked_s": walked_s, "commit": git_commit()}
    meta |= {"load_before": load_before, "load_after": load_average()}
    return meta | result | {"steps": steps, "cli": cli, "samples": samples}


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--sessions", type=int, default=4, help="visitors, each its own Chromium")
    parser.add_argument("--minutes", type=float, default=10, help="how long the visitors walk")
    parser.add_argument("--seed", type=int, help="the walks' seed (default: a random one)")
    parser.add_argument("--port", type=int, default=0, help="server A's (default: a free one)")
    parser.add_argument("--cli-every", type=float, default=30, help="seconds between CLI runs")
    parser.add_argument("--warmup", default="full", help="HIERLSTM_WARMUP of both servers")
    parser.add_argument("--artifacts", default=str(browser.ROOT / "test-artifacts"))
    parser.add_argument("--json", help="also write the report's figures and every step here")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.minutes <= 0 or args.cli_every <= 0:
        parser.error("--sessions must be at least 1; --minutes and --cli-every above 0")
    args.seed = random.SystemRandom().randrange(10**6) if args.seed is None else args.seed
    print(f"soak: seed {args.seed}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda _number, _frame: sys.exit(143))
    folder = Path(tempfile.mkdtemp(prefix="hierlstm-soak-"))
    os.environ.update(XDG_DATA_HOME=str(folder / "data"), HIERLSTM_WARMUP=args.warmup)
    os.environ.update(browser.own_store(folder))  # the servers' and the CLI's
    stem = Path(args.artifacts) / f"soak-{time.strftime('%Y%m%d-%H%M%S')}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    try:
        result = soak(args, folder)
        for kept in [*folder.glob("server-*.log"), *folder.glob("*.png")]:
            shutil.copyfile(kept, f"{stem}-{kept.name}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    with open(f"{stem}.csv", "w") as table:
        table.write("at_s,server,rss_mb,cpu_pct,threads\n")
        table.writelines(",".join(map(str, row)) + "\n" for row in result["samples"])
    for path in [f"{stem}.json", *([args.json] if args.json else [])]:
        Path(path).write_text(json.dumps(result, indent=1) + "\n")
    print(markdown(result))
    sys.exit(1 if result["failures"] else 0)


if __name__ == "__main__":
    main()
