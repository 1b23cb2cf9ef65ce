"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (seconds each took in one
# worker of a three-worker run of `make test`'s command, 2026-12-03), so no worker starts a
# long file while the others are finishing: the run ends when the workers' shares, not one late
# file, are done. Only the order of files changes; the tests of a file keep their own order.
# Where a file's tests were cut since, its figure is followed by an estimate from two workers on
# a shared machine: the next `make test`'s durations should replace them.
SLOWEST_FIRST = (
    "tests/app/test_browser.py",  # 107 s
    "tests/model/test_training.py",  # 95 (12 items fewer since: about 85)
    "tests/app/test_app.py",  # 93 (its profile run is test_profile_page's since: about 75)
    "tests/app/test_every_page.py",  # 75
    "tests/benchmarks/test_smoke.py",  # about 110; about 75 with fewer workers and parts
    "tests/timing/test_bench_training.py",  # 48 (112 in a later run; less its XLA step)
    "tests/benchmarks/test_smoke_fresh.py",  # about 60
    "tests/timing/test_gpu_trace.py",  # 68; about 50 with XLA run on one variant
    "tests/app/test_profile_page.py",  # 71; about 50 without the estimate's calibrations
    "tests/cli/test_cli_backends.py",  # 72; 45 in one process (2 workers, a shared machine)
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
