"""Synthetic bells for the JACK harnesses (Tests/JACK, Benchmarks/jack-peers.py): step bells, and
16-bit mono WAV files. Needs numpy.
"""
import wave

import numpy as np


def step_bell(level, hold_frames, decay_frames):
    """16-bit samples: `level` (of 32768) for `hold_frames`, then a straight line down to 0."""
    decay = np.round(level * (1 - np.arange(1, decay_frames + 1) / decay_frames))
    return np.concatenate([np.full(hold_frames, level), decay]).astype("<i2")


def write_wav(path, samples, rate):
    """16-bit `samples` (little-endian) as a mono WAV file at `rate`."""
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())
