"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each file's tests took
# in a fresh clone's `CI=true bash .ci/run`, three workers, 2026-12-06, 610 s of pytest; from its
# JUnit XML), so no worker starts a long file while the others are finishing. Only the order of
# files changes.
SLOWEST_FIRST = (
    "tests/model/test_training.py",  # 156 s
    "tests/benchmarks/test_smoke.py",  # 149
    "tests/app/test_browser.py",  # 114
    "tests/app/test_every_page.py",  # 109
    "tests/benchmarks/test_smoke_fresh.py",  # 81
    "tests/timing/test_gpu_trace.py",  # 75
    "tests/cli/test_cli_backends.py",  # 61
    "tests/app/test_profile_page.py",  # 58
    "tests/backends/test_pool.py",  # 57
    "tests/distributed/test_distribute.py",  # 55
    "tests/app/test_app_refusals.py",  # 54
    "tests/app/test_app.py",  # 53
    "tests/backends/test_oracles.py",  # 48
    "tests/model/test_memory_parts.py",  # 46
    "tests/model/test_variants.py",  # 44
    "tests/timing/test_bench_training.py",  # 44
    "tests/test_refusals.py",  # 42
    "tests/cli/test_cli_training.py",  # 37
    "tests/profiling/test_timeline.py",  # 36
    "tests/test_gpu_check.py",  # 32
    "tests/profiling/test_profiler.py",  # 30
    "tests/benchmarks/test_classroom.py",  # 27
    "tests/app/test_warmup.py",  # 24
    "tests/test_imports.py",  # 24
    "tests/hardware/test_gpu_rules.py",  # 23
    "tests/app/test_backends_app.py",  # 22
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
