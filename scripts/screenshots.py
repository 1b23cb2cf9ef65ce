"""The docs' screenshots, made from the running app: every page in English and in Chinese, each
page's Run pressed once on the default settings where it runs something, and the banner of a
machine with an NVIDIA GPU that TensorFlow cannot use (the tests' stand-in nvidia-smi on PATH).

    .venv/bin/python scripts/screenshots.py [--out docs/screenshots] [--pages shape_trace,...]

Writes OUT/<lang>/<page>.png, OUT/<lang>/benchmark-training.png (a training step) and
OUT/<lang>/gpu-unusable.png. Needs Chromium (`make browser`). A page that draws an exception or
an error, or a server log with a traceback, stops it with the page named: a screenshot of a
broken page is never written.
The servers keep their results in a temporary folder, so the user's store is left alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from benchmarks.serving import browser, visit  # noqa: E402
from hierlstm.app.pages import PAGES  # noqa: E402

FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"
# the whole page: Streamlit scrolls inside its main block, so the viewport grows to fit it
CONTENT_HEIGHT = """() => Math.max(...Array.from(document.querySelectorAll(
    '[data-testid="stMain"], [data-testid="stAppViewContainer"]')).map(e => e.scrollHeight))"""


def whole_page(tab, path: Path) -> None:
    height = 0
    for _attempt in range(4):  # charts drawn on becoming visible grow the page again
        new_height = min(int(tab.evaluate(CONTENT_HEIGHT)) + 40, 12000)
        if new_height == height:
            break
        height = new_height
        tab.set_viewport_size({"width": browser.VIEWPORT["width"], "height": max(1000, height)})
        tab.wait_for_timeout(1000)  # plotly relayouts, tables draw their canvas once visible
    path.parent.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(path), full_page=True)
    # 256 colours: a third of the bytes, and a UI's flat colours lose nothing visible
    Image.open(path).convert("RGB").quantize(256).save(path, optimize=True)
    tab.set_viewport_size(browser.VIEWPORT)
    print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, flush=True)


def drawn_problems(tab) -> list[str]:
    """The text of every exception and error the page draws."""
    found = tab.locator('[data-testid="stException"], [data-testid="stAlertContentError"]')
    return [found.nth(index).inner_text() for index in range(found.count())]


def serve(folder: Path, environment: dict[str, str]):
    port = browser.free_port()
    log, started = folder / f"server-{port}.log", time.perf_counter()
    process = browser.start_server(port, log, {**browser.own_store(folder), **environment})
    try:
        browser.wait_healthy(f"http://127.0.0.1:{port}", process, started)
    except RuntimeError:
        browser.stop(process)  # not left serving when it never answered
        raise
    return process, f"http://127.0.0.1:{port}", log


# (page, extra URL parameters, file name): every page on the defaults, a training step, and
# Benchmark and Scaling with the inference runtimes beside TensorFlow
SHOTS = [(page.name, "", page.name) for page in PAGES]
SHOTS.append(("benchmark", "task=training", "benchmark-training"))
RUNTIMES = "backend=tensorflow,onnxruntime,openvino&variants=nested,folded"
SHOTS.append(("benchmark", RUNTIMES, "benchmark-runtimes"))
SHOTS.append(("scaling", RUNTIMES, "scaling-runtimes"))


def shoot(tab, url: str, log: Path, out: Path, names: list[str]) -> None:
    heavy = {entry.name: entry.action.heavy for entry in PAGES}
    for lang in ("en", "zh"):
        pages = {page.name: page for page in visit.app_pages(lang)}
        for name, query, file_name in SHOTS:
            if name not in names:
                continue
            page = pages[name]
            query = "&".join(part for part in (f"lang={lang}", query) if part)
            shown = visit.open_page(tab, url, page, log, query=query)
            if heavy[name]:
                shown = visit.press_run(tab, page, log)
            if shown.idle_s is None:
                raise SystemExit(f"{file_name} ({lang}) did not settle: {shown.note}")
            if problems := drawn_problems(tab) + browser.tracebacks(log.read_text()):
                raise SystemExit(f"{file_name} ({lang}) is broken: {problems[0][:2000]}")
            whole_page(tab, out / lang / f"{file_name}.png")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="scripts/screenshots.py", description=__doc__)
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshots"))
    parser.add_argument("--pages", default=",".join(page.name for page in PAGES))
    args = parser.parse_args(argv)
    out, names = Path(args.out).resolve(), args.pages.split(",")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="hierlstm-shots-") as folder, sync_playwright() as p:
        chromium = browser.launch_chromium(p)
        server, url, log = serve(Path(folder), {})
        try:
            shoot(visit.new_page(chromium), url, log, out, names)
        finally:
            browser.stop(server)
        path = f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}"
        server, url, log = serve(Path(folder), {"PATH": path})
        try:
            tab = visit.new_page(chromium)
            for lang in ("en", "zh"):
                visit.open_page(tab, url, visit.app_pages(lang)[0], log, query=f"lang={lang}")
                whole_page(tab, out / lang / "gpu-unusable.png")
        finally:
            browser.stop(server)


if __name__ == "__main__":
    main()
