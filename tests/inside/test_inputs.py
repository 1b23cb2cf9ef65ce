"""Inputs a person can read: the built-in sounds' spectrograms show what their names say, and a
WAV file is read as mono PCM or refused in one line in either language. No TensorFlow."""

import io
import struct
import wave

import numpy as np
import pytest

from hierlstm.i18n import LANGUAGES
from hierlstm.inside.sounds import SAMPLE_RATE, SOUNDS, WINDOW, sound_input, sound_sequences
from hierlstm.inside.wav import MAX_SECONDS, WavRefused, read_wav, wav_input

HEIGHT, TIME = 36, 40


def loudest_rows(name: str) -> np.ndarray:
    return sound_input(name, HEIGHT, TIME).argmax(axis=0)  # (time,)


def test_a_rising_chirp_climbs_and_a_falling_one_descends():
    rising, falling = loudest_rows("rising"), loudest_rows("falling")
    assert np.all(np.diff(rising[2:-2]) >= 0) and rising[-3] - rising[2] > HEIGHT // 2
    assert np.all(np.diff(falling[2:-2]) <= 0) and falling[2] - falling[-3] > HEIGHT // 2


def test_two_steady_tones_light_two_fixed_bands_and_silence_none():
    tones = sound_input("tones", HEIGHT, TIME)
    lit = {tuple(np.flatnonzero(column > 0.6)) for column in tones[:, 2:-2].T}
    assert len(lit) == 1 and len(lit.pop()) >= 2
    assert sound_input("silence", HEIGHT, TIME).max() == 0.0


def test_a_noise_burst_covers_every_band_and_is_seeded():
    noise = sound_input("noise", HEIGHT, TIME, seed=3)
    assert noise[:, TIME // 2].min() > 0.2
    assert np.array_equal(noise, sound_input("noise", HEIGHT, TIME, seed=3))
    assert not np.array_equal(noise, sound_input("noise", HEIGHT, TIME, seed=4))


def test_sequences_of_segments_label_every_frame_with_its_sound():
    inputs, labels = sound_sequences(6, HEIGHT, TIME, np.random.default_rng(0))
    assert inputs.shape == (6, HEIGHT, TIME, 1) and labels.shape == (6, TIME)
    silent = labels == SOUNDS.index("silence")
    frames = inputs[..., 0].max(axis=1)  # (count, time): the loudest band of each frame
    inside = silent & np.roll(silent, 1, axis=1) & np.roll(silent, -1, axis=1)  # not at an edge
    assert inside.any() and frames[inside].max() == 0.0
    assert frames[~silent].min() > 0.3


def wav_bytes(samples, width=2, channels=1, rate=SAMPLE_RATE, frames=None) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(channels)
        file.setsampwidth(width)
        file.setframerate(rate)
        scale = 2 ** (8 * width - 1) - 1
        ints = np.round(np.repeat(samples, channels) * scale).astype(np.int64)
        if width == 1:
            raw = (ints + 128).astype(np.uint8).tobytes()
        else:
            raw = b"".join(int(v).to_bytes(width, "little", signed=True) for v in ints)
        file.writeframes(raw)
        if frames is not None:
            file.setnframes(frames)
    return buffer.getvalue()


TONE = 0.5 * np.sin(2 * np.pi * 1000 * np.arange(SAMPLE_RATE // 4) / SAMPLE_RATE)


@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_a_pcm_wav_of_any_width_reads_back_as_its_samples(width):
    samples, rate = read_wav(wav_bytes(TONE, width=width))
    assert rate == SAMPLE_RATE and np.max(np.abs(samples - TONE)) < 2.0 / 2 ** (8 * width - 1)


def test_a_tone_in_a_wav_lights_its_frequency_band():
    picture = wav_input(wav_bytes(TONE), HEIGHT, 20)
    bin_of_1khz = 1000 / (SAMPLE_RATE / WINDOW)
    band = int(bin_of_1khz / ((WINDOW // 2 + 1) / HEIGHT))  # the band holding that bin
    assert picture.shape == (HEIGHT, 20) and set(picture.argmax(axis=0)) == {band}


def float_wav() -> bytes:
    data = np.zeros(100, np.float32).tobytes()
    header = struct.pack("<HHIIHH", 3, 1, SAMPLE_RATE, SAMPLE_RATE * 4, 4, 32)  # format 3: float
    chunks = b"WAVE" + b"fmt " + struct.pack("<I", 16) + header
    chunks += b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(chunks)) + chunks


REFUSED = {
    "not a wav": (b"ID3 this is an mp3, not a wav at all", "wav.not_wav"),
    "empty": (b"", "wav.not_wav"),
    "float": (float_wav(), "wav.not_pcm"),
    "stereo": (wav_bytes(TONE, channels=2), "wav.channels"),
    "too long": (wav_bytes(np.zeros(int(MAX_SECONDS * 800) + 1), rate=800), "wav.too_long"),
    "truncated": (wav_bytes(TONE)[:-1000], "wav.truncated"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_file_that_is_not_a_short_mono_pcm_wav_is_one_line_in_both_languages(case):
    data, key = REFUSED[case]
    with pytest.raises(WavRefused) as refused:
        wav_input(data, HEIGHT, TIME)
    assert refused.value.key == key
    for lang in LANGUAGES:
        line = refused.value.sentence(lang)
        assert line and "\n" not in line and "{" not in line
