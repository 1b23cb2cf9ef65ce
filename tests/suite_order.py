"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each took in one
# worker of a three-worker run of `make test`'s command, 2026-12-03), so no worker starts a
# long file while the others are finishing: the run ends when the workers' shares, not one late
# file, are done. Only the order of files changes; the tests of a file keep their own order.
SLOWEST_FIRST = (
    "tests/app/test_browser.py",  # 107 s
    "tests/model/test_training.py",  # 95
    "tests/benchmarks/test_smoke.py",  # about 110 (2026-12-03, a fresh clone's make test)
    "tests/benchmarks/test_smoke_fresh.py",  # about 60
    "tests/app/test_app.py",  # 93
    "tests/app/test_every_page.py",  # 75
    "tests/cli/test_cli_backends.py",  # 72
    "tests/app/test_profile_page.py",  # 71
    "tests/timing/test_gpu_trace.py",  # 68
    "tests/timing/test_bench_training.py",  # 48
    "tests/test_gpu_check.py",  # 40
    "tests/app/test_backends_app.py",  # 39
    "tests/backends/test_pool.py",  # 34
    "tests/model/test_memory_parts.py",  # 33
    "tests/distributed/test_distribute.py",  # 31
    "tests/backends/test_oracles.py",  # 31
    "tests/test_refusals.py",  # 30
    "tests/model/test_variants.py",  # 29
    "tests/app/test_warmup.py",  # 26
    "tests/cli/test_cli_training.py",  # 24
    "tests/app/test_app_refusals.py",  # 22
    "tests/profiling/test_timeline.py",  # 22
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
