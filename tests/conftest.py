"""One TensorFlow import per test session, with its native start-up lines kept quiet."""

from hierlstm._native import import_tensorflow_quietly

import_tensorflow_quietly()
