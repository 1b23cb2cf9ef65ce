"""The order of the suite's files, given to pytest by tests/conftest.py."""

# `make test` gives each worker process whole files (pytest-xdist's --dist loadfile) in the
# order collected here. The slowest files go first, longest first (the seconds its tests took in
# a three-worker run of `make test`'s command, 2026-12-06, 629 s in all), so no worker starts a
# long file while the others are finishing. Only the order of files changes.
SLOWEST_FIRST = (
    "tests/model/test_training.py",  # 168 s
    "tests/app/test_every_page.py",  # 131
    "tests/app/test_browser.py",  # 128
    "tests/benchmarks/test_smoke.py",  # 102
    "tests/benchmarks/test_smoke_fresh.py",  # 71
    "tests/timing/test_bench_training.py",  # 63
    "tests/cli/test_cli_backends.py",  # 63
    "tests/app/test_app.py",  # 59
    "tests/distributed/test_distribute.py",  # 54
    "tests/timing/test_gpu_trace.py",  # 51
    "tests/backends/test_oracles.py",  # 50
    "tests/backends/test_pool.py",  # 48
    "tests/app/test_profile_page.py",  # 48
    "tests/app/test_app_refusals.py",  # 48
    "tests/model/test_variants.py",  # 46
    "tests/profiling/test_timeline.py",  # 36
    "tests/profiling/test_profiler.py",  # 32
    "tests/app/test_run_worker.py",  # 32
    "tests/cli/test_cli_training.py",  # 29
    "tests/app/test_backends_app.py",  # 29
    "tests/benchmarks/test_classroom.py",  # 26
    "tests/cli/test_cli_runtimes.py",  # 26
    "tests/app/test_warmup.py",  # 24
    "tests/test_refusals.py",  # 22
    "tests/test_gpu_check.py",  # 22
    "tests/app/test_runtimes_app.py",  # 22
    "tests/hardware/test_gpu_rules.py",  # 21
    "tests/cli/test_cli.py",  # 20
    "tests/model/test_memory_parts.py",  # 19
    "tests/test_tour.py",  # 17
    "tests/test_docs.py",  # 17
    "tests/cli/test_device_lock.py",  # 16
    "tests/timing/test_bench.py",  # 15
    "tests/cli/test_cli_inside.py",  # 15
    "tests/cli/test_cli_yours.py",  # 14
    "tests/test_imports.py",  # 14
    "tests/model/test_trace.py",  # 13
    "tests/model/test_pitfalls.py",  # 12
    "tests/app/test_diff_pages.py",  # 12
    "tests/app/test_inside_page.py",  # 11
)


def pytest_collection_modifyitems(items):
    """`items` sorted in place: SLOWEST_FIRST's files first, in its order; the rest after."""
    rank = {path: index for index, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
