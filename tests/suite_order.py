"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each took in one
# worker of a two-worker fresh-clone run, 2026-12-02), so no worker starts a long file while
# the other is finishing: the run ends when the two workers' shares, not one late file, are
# done. Only the order of files changes; the tests of a file keep their own order.
SLOWEST_FIRST = (
    "tests/app/test_browser.py",  # 422 s
    "tests/app/test_app.py",  # 160
    "tests/model/test_training.py",  # 156
    "tests/app/test_every_page.py",  # 128
    "tests/app/test_profile_page.py",  # 82
    "tests/timing/test_gpu_trace.py",  # 80
    "tests/cli/test_cli_backends.py",  # 68
    "tests/timing/test_bench_training.py",  # 57
    "tests/app/test_backends_app.py",  # 53
    "tests/test_gpu_check.py",  # 51
    "tests/app/test_warmup.py",  # 44
    "tests/app/test_diff_pages.py",  # 44
    "tests/backends/test_pool.py",  # 43
    "tests/distributed/test_distribute.py",  # 41
    "tests/model/test_memory_parts.py",  # 39
    "tests/backends/test_oracles.py",  # 34
    "tests/model/test_variants.py",  # 34
    "tests/test_refusals.py",  # 34
    "tests/cli/test_cli_training.py",  # 33
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
