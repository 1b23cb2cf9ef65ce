"""The timing layer: the harness (first call apart, warm-up, synchronised samples, interleaved
rounds), memory probes, failures, sweeps, tf.distribute, devices, the server's limits, the
long-run estimate and the device lock. Returns records (`timing.records`); never stores,
never prints, never imports Streamlit."""
