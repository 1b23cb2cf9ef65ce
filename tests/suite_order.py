"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each took in one
# worker of a three-worker run of `make test`'s command, 2026-12-03, 484 s in all), so no worker
# starts a long file while the others are finishing. Only the order of files changes.
SLOWEST_FIRST = (
    "tests/model/test_training.py",  # 120 s
    "tests/app/test_browser.py",  # 105
    "tests/benchmarks/test_smoke.py",  # 95
    "tests/app/test_every_page.py",  # 82
    "tests/app/test_app.py",  # 71
    "tests/timing/test_gpu_trace.py",  # 63
    "tests/app/test_profile_page.py",  # 52
    "tests/cli/test_cli_backends.py",  # 52
    "tests/backends/test_pool.py",  # 49
    "tests/benchmarks/test_smoke_fresh.py",  # 46
    "tests/distributed/test_distribute.py",  # 46
    "tests/timing/test_bench_training.py",  # 45
    "tests/app/test_backends_app.py",  # 45
    "tests/backends/test_oracles.py",  # 41
    "tests/model/test_memory_parts.py",  # 38
    "tests/app/test_app_refusals.py",  # 38
    "tests/cli/test_cli_training.py",  # 34
    "tests/test_refusals.py",  # 30
    "tests/test_gpu_check.py",  # 29
    "tests/profiling/test_profiler.py",  # 26
    "tests/model/test_variants.py",  # 26
    "tests/profiling/test_timeline.py",  # 26
    "tests/benchmarks/test_classroom.py",  # 17 (measured alone)
    "tests/test_tour.py",  # 16 (measured alone: a Jupyter kernel runs docs/tour.ipynb)
    "tests/app/test_yours_page.py",  # 13 (one process, 2026-12-03)
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
