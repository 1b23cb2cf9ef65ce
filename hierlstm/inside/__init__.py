"""Values a person can read, through every layer: built-in sounds and WAV files as spectrograms
(numpy and the standard library's `wave`), every layer's values for one input from the oracle
and from the Keras model, the input cells a pooled cell sees, the variants' agreement on values,
a small task the model learns from the sounds, and what if a part were changed: interventions
applied in the oracle and in TensorFlow, and a map of the hidden states. `sounds`, `wav`,
`provenance`, `learning`, `whatif` and `hidden_map` import no TensorFlow."""

from hierlstm._lazy import lazy_exports

EXPORTS = {
    "SOUNDS": "sounds",
    "sound_input": "sounds",
    "sound_sequences": "sounds",
    "spectrogram": "sounds",
    "WavRefused": "wav",
    "wav_input": "wav",
    "LAYERS": "keras_values",
    "layer_values": "keras_values",
    "receptive_field": "provenance",
    "variant_differences": "agreement",
    "Learning": "learning",
    "learn": "learner",
    "Intervention": "whatif",
    "interventions_from_text": "whatif_syntax",
    "oracle_values": "whatif",
    "intervened_values": "whatif_tf",
    "hidden_maps": "hidden_map",
}
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
