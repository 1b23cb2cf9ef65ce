"""The model layer: one hierarchical-LSTM function built as several Keras variants from one
parameter set, the float64 numpy oracle and the checks against it, the cost model, the shape
trace, the weight-sharing comparison, the Keras pitfalls reproduced live. Imports TensorFlow and
Keras (but `cost` and `cudnn` do not); never timing, results, the app or the CLI."""
