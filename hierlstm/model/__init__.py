"""The model layer: one hierarchical-LSTM function built as several Keras variants from one
parameter set, its float64 numpy oracle and checks, the cost model, the shape trace and the Keras
pitfalls reproduced live. The `*_tf`, `fused`, `bptt`, `training`, `trace`, `sharing` and `pitfalls`
modules are TensorFlow's; the rest runs on any Keras backend (`cost`, `cudnn` import no Keras at
all)."""
