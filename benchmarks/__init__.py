"""The benchmarks: drivers that time hierlstm beside something else (each other, PyTorch, the
app's estimate, a browser's floor) and print markdown for RESULTS.md. Each is a module with a
`main(argv)`, listed once in `benchmarks.registry`; `python -m benchmarks` lists them and
`python -m benchmarks NAME [args]` (or `python -m benchmarks.NAME [args]`) runs one, from the
repository root. `common`, `browser` and `visit` are what they share; the browser tests use
`browser` too. Importing the package imports nothing else."""
