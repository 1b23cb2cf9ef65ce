"""A WAV file a user gives, read with the standard library's `wave`: mono PCM (8, 16, 24 or 32
bits) of at most MAX_SECONDS, as the spectrogram of `sounds`. Anything else is a `WavRefused`
carrying a catalogue key and its values, one line in either language."""

from __future__ import annotations

import io
import wave

import numpy as np

from hierlstm.i18n import MessageError
from hierlstm.inside.sounds import spectrogram

MAX_SECONDS = 10.0


class WavRefused(MessageError, ValueError):
    """A file that is not a short mono PCM WAV: `key` (`wav.*` in the catalogue) and `values`."""


def _samples(raw: bytes, width: int) -> np.ndarray:
    """Little-endian PCM bytes -> floats in [-1, 1] (8-bit WAV is unsigned, the rest signed)."""
    if width == 1:
        return (np.frombuffer(raw, np.uint8).astype(np.float64) - 128) / 128
    if width == 3:  # no numpy type: widen each sample to 4 bytes, sign kept by the shift
        triples = np.frombuffer(raw, np.uint8).reshape(-1, 3).astype(np.int32)
        values = (triples[:, 0] << 8) | (triples[:, 1] << 16) | (triples[:, 2] << 24)
        return (values >> 8) / 2.0**23
    kind = {2: "<i2", 4: "<i4"}[width]
    return np.frombuffer(raw, kind).astype(np.float64) / 2.0 ** (8 * width - 1)


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """(samples in [-1, 1], sample rate) of a mono PCM WAV file's bytes; WavRefused otherwise."""
    try:
        with wave.open(io.BytesIO(data)) as file:
            channels, width = file.getnchannels(), file.getsampwidth()
            rate, count = file.getframerate(), file.getnframes()
            if channels != 1:
                raise WavRefused("wav.channels", channels=channels)
            if width not in (1, 2, 3, 4) or rate <= 0:
                raise WavRefused("wav.not_pcm")
            if count > MAX_SECONDS * rate:
                raise WavRefused("wav.too_long", seconds=count / rate, limit=MAX_SECONDS)
            raw = file.readframes(count)
    except wave.Error as error:  # "unknown format: 3" is IEEE float, a compressed one likewise
        known = str(error).startswith("unknown format")
        raise WavRefused("wav.not_pcm" if known else "wav.not_wav") from None
    except EOFError:
        raise WavRefused("wav.not_wav") from None
    if count == 0 or len(raw) < count * width:
        raise WavRefused("wav.truncated", have=len(raw) // width, said=count)
    return _samples(raw, width), rate


def wav_input(data: bytes, height: int, time_steps: int) -> np.ndarray:
    """A WAV file's bytes as (height, time_steps): its whole length in `time_steps` frames."""
    samples, _rate = read_wav(data)
    return spectrogram(samples, height, time_steps)
