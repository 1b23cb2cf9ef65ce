"""The model layer: one hierarchical-LSTM function built as several Keras variants from one
parameter set, the float64 numpy oracle and the checks against it, the cost model, the shape
trace, the weight-sharing comparison, the Keras pitfalls reproduced live. The portable part
(`builders`, `layers`, `trunk`, `params`, `portable`, `optimizers`, `check`, `gradcheck`) runs
on any Keras backend and imports no TensorFlow; `builders_tf`, `layers_tf`, `fused`, `bptt`,
`training`, `trace`, `sharing` and `pitfalls` are TensorFlow's; `cost` and `cudnn` import
neither. Never timing, results, the app or the CLI."""
