"""The benchmarks: drivers that time hierlstm beside something else (each other, PyTorch, the
app's estimate, a browser's floor) and print markdown for RESULTS.md, in two subpackages by
concern: `model` (the function) and `serving` (the app's server and its visitors), neither
importing the other; at the top only what both share (`record`, `common`) and the list of every
benchmark (`registry`, run as `python -m benchmarks NAME`). Importing the package imports
nothing else."""
