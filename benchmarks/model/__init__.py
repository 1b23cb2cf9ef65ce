"""The model's benchmarks: the hierarchical LSTM's variants timed against each other, against the
same function in PyTorch and on Keras's other backends, its fused variant taken apart, its first
call against time steps, the app's estimate and the profiler's split checked against real runs,
and the GPU check's report. Each module has a `main(argv)`, run as `python -m benchmarks NAME`."""
