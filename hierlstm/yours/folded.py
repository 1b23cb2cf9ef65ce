"""The rewrite's layer for `TimeDistributed(LSTM/GRU)`: batch and time folded into one axis, one
call of the recurrent layer over every sub-sequence, unfolded after. A dependent chain of the
inner length, not time x inner length, and one cuDNN call instead of one per time step (or, over
an unknown length, Keras 3's vectorized_map over the batch axis). Serializable: a saved rewrite
loads wherever hierlstm is imported."""

from __future__ import annotations

import keras


@keras.saving.register_keras_serializable(package="hierlstm")
class FoldedTimeDistributed(keras.layers.Wrapper):
    """(batch, time, *inner) -> (batch*time, *inner) -> layer -> (batch, time, *out)."""

    folds_time = True  # the walker (`hierlstm.model.walk`) calls its layer once on (B*T, ...)

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True  # the (batch, time) mask passes on, as TimeDistributed's

    def compute_mask(self, inputs, mask=None):
        return mask

    def build(self, input_shape):
        if not self.layer.built:  # loading a saved model builds the inner layer first
            self.layer.build((None, *input_shape[2:]))
        self.built = True

    def call(self, inputs, training=None, mask=None):
        # A (batch, time) mask masks whole calls, as TimeDistributed reads it: its layer gets
        # none, so neither does the folded call.
        shape = keras.ops.shape(inputs)
        inner = [shape[i] if size is None else size for i, size in enumerate(inputs.shape)][2:]
        folded = keras.ops.reshape(inputs, (-1, *inner))  # (B*T, *inner)
        outputs = self.layer(folded, training=training)  # (B*T, *out)
        out = [
            keras.ops.shape(outputs)[i] if size is None else size
            for i, size in enumerate(outputs.shape)
        ][1:]
        return keras.ops.reshape(outputs, (shape[0], shape[1], *out))  # (B, T, *out)

    def compute_output_shape(self, input_shape):
        inner = self.layer.compute_output_shape((None, *input_shape[2:]))
        return (input_shape[0], input_shape[1], *inner[1:])
