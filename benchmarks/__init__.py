"""The benchmarks: drivers that time hierlstm beside something else (each other, PyTorch, the
app's estimate, a browser's floor) and print markdown for RESULTS.md. Each is a module with a
`main(argv)`, listed once in `benchmarks.registry`. Importing the package imports nothing else."""
