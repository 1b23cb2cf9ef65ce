"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each took in one
# worker of a two-worker run, 2026-12-02), so no worker starts a long file while the other is
# finishing: the run ends when the two workers' shares, not one late file, are done. Only the
# order of files changes; the tests of a file keep their own order.
SLOWEST_FIRST = (
    "tests/app/test_browser.py",  # 559 s
    "tests/app/test_app.py",  # 318
    "tests/app/test_every_page.py",  # 236
    "tests/app/test_backends_app.py",  # 138
    "tests/app/test_profile_page.py",  # 124
    "tests/timing/test_bench_training.py",  # 121
    "tests/model/test_training.py",  # 102
    "tests/benchmarks/test_soak.py",  # 99
    "tests/app/test_diff_pages.py",  # 98
    "tests/cli/test_cli_backends.py",  # 86
    "tests/test_gpu_check.py",  # 84
    "tests/app/test_app_refusals.py",  # 82
    "tests/distributed/test_distribute.py",  # 79
    "tests/backends/test_oracles.py",  # 77
    "tests/app/test_warmup.py",  # 76
    "tests/timing/test_gpu_trace.py",  # 69
    "tests/profiling/test_timeline.py",  # 61
    "tests/backends/test_pool.py",  # 49
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
