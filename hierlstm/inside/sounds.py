"""Built-in synthetic sounds and the spectrogram every input becomes; numpy only, seeded.

A sound is a waveform at `SAMPLE_RATE`; `spectrogram` turns any waveform into (height, frames):
row 0 the lowest frequency band, one column per frame, values in [0, 1] (0 is 60 dB below a
full-scale sine, 1 is full scale), the model's input as (1, height, frames, 1)."""

from __future__ import annotations

import numpy as np

SOUNDS = ("rising", "falling", "tones", "noise", "silence")
SAMPLE_RATE = 8000  # Hz: every built-in sound
HOP = 128  # samples per frame of a built-in sound (16 ms)
WINDOW = 256  # samples per STFT frame (Hann)
FLOOR_DB = 60.0  # the quietest level shown, below full scale
LOW_HZ, HIGH_HZ = 150.0, 3700.0  # the chirps' span, inside the 4 kHz Nyquist band
TONES_HZ = (700.0, 2300.0)


def synthesize(name: str, samples: int, rng: np.random.Generator) -> np.ndarray:
    """`samples` of sound `name` (one of SOUNDS) in [-1, 1]: a chirp sweeps LOW_HZ to HIGH_HZ
    (or back) over the whole length; the noise burst rises and falls; `rng` draws the noise."""
    if name not in SOUNDS:
        raise ValueError(f"sound must be one of {', '.join(SOUNDS)}; got {name!r}.")
    seconds = np.arange(samples) / SAMPLE_RATE
    duration = max(samples / SAMPLE_RATE, 1e-9)
    if name in ("rising", "falling"):
        start, end = (LOW_HZ, HIGH_HZ) if name == "rising" else (HIGH_HZ, LOW_HZ)
        phase = 2 * np.pi * (start * seconds + (end - start) * seconds**2 / (2 * duration))
        return 0.5 * np.sin(phase)
    if name == "tones":
        return sum(0.3 * np.sin(2 * np.pi * hz * seconds) for hz in TONES_HZ)
    if name == "noise":
        envelope = np.sin(np.pi * (np.arange(samples) + 0.5) / samples)  # up, then down
        return 0.5 * envelope * rng.uniform(-1.0, 1.0, samples)
    return np.zeros(samples)


def _bands(magnitudes: np.ndarray, height: int) -> np.ndarray:
    """(bins, frames) -> (height, frames): the loudest bin of each of `height` equal bands."""
    bins = magnitudes.shape[0]
    edges = np.linspace(0, bins, height + 1)
    rows = []
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        first = min(int(low), bins - 1)
        rows.append(magnitudes[first : max(first + 1, int(np.ceil(high)))].max(axis=0))
    return np.stack(rows)


def spectrogram(signal: np.ndarray, height: int, frames: int) -> np.ndarray:
    """(samples,) in [-1, 1] -> (height, frames) float32 in [0, 1]: a Hann-windowed STFT of
    WINDOW samples centred on `frames` evenly spaced points, each band's loudest bin in dB
    above -FLOOR_DB, scaled to [0, 1]."""
    signal = np.asarray(signal, dtype=np.float64)
    window = np.hanning(WINDOW)
    padded = np.pad(signal, WINDOW // 2)
    hop = len(signal) / frames
    starts = np.round((np.arange(frames) + 0.5) * hop).astype(int)  # centres, in padded samples
    starts = np.clip(starts, 0, len(padded) - WINDOW) if len(padded) >= WINDOW else starts * 0
    padded = np.pad(padded, (0, max(0, WINDOW - len(padded))))
    chunks = np.stack([padded[start : start + WINDOW] for start in starts])  # (frames, WINDOW)
    magnitudes = np.abs(np.fft.rfft(chunks * window, axis=1)).T / (window.sum() / 2)
    decibels = 20 * np.log10(np.maximum(_bands(magnitudes, height), 1e-12))
    return np.clip((decibels + FLOOR_DB) / FLOOR_DB, 0.0, 1.0).astype(np.float32)


def sound_input(name: str, height: int, time_steps: int, seed: int = 0) -> np.ndarray:
    """Sound `name` lasting `time_steps` frames of HOP samples, as (height, time_steps)."""
    rng = np.random.default_rng([seed, SOUNDS.index(name) if name in SOUNDS else 0])
    return spectrogram(synthesize(name, time_steps * HOP, rng), height, time_steps)


def sound_sequences(
    count: int, height: int, time_steps: int, rng: np.random.Generator, shortest: int = 3
) -> tuple[np.ndarray, np.ndarray]:
    """`count` sequences of random segments, each a random sound lasting `shortest` to
    3 x `shortest` frames: inputs (count, height, time_steps, 1) float32 and, at every frame,
    the index in SOUNDS of the sound playing (count, time_steps) int32."""
    inputs = np.empty((count, height, time_steps, 1), np.float32)
    labels = np.empty((count, time_steps), np.int32)
    for row in range(count):
        pieces, frame = [], 0
        while frame < time_steps:
            length = min(int(rng.integers(shortest, 3 * shortest + 1)), time_steps - frame)
            sound = int(rng.integers(len(SOUNDS)))
            pieces.append(synthesize(SOUNDS[sound], length * HOP, rng))
            labels[row, frame : frame + length] = sound
            frame += length
        inputs[row, :, :, 0] = spectrogram(np.concatenate(pieces), height, time_steps)
    return inputs, labels
