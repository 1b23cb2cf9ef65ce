"""Each Keras backend's runner: the one module of its framework's own calls, named after its
registry row (`hierlstm/backends/runners/<name>.py`, `hierlstm.registry.Backend.runner`) and
imported by `hierlstm.backends.runner(name)` when a run needs it. A runner imports its framework
only inside its functions. The contract:

    start()                              the worker process's start (TensorFlow's quiet import)
    run_failures()                       what a run can raise that is its failure, not a bug
    failure_line(error)                  that failure in one line
    memory_probe(device)                 one sample's memory probe (`hierlstm.timing.rss`)
    profile_probe(device)                a profile's, or None where no peak can be measured
    prepare(config, *, seed, progress)   a `BackendRun`: built, placed, compiled, first-called
    profile(worker, config, request)     a profile in the backend's worker, as JSON
    read_capture(document)               (document, its step in time or None), read here

A backend that runs the model's calls itself (JAX, PyTorch: `backends.compile.keras_run`) also
has `gpu_names()`, `compiled(model, config, inputs, target)`, `kernel_ran(functions, training)`
and `backend_facts()` (the cuDNN rule's machine facts). Adding a backend: its registry row
(`hierlstm.registry.BACKEND_RECORDS`) and its module here; docs/architecture.md lists the rest."""
