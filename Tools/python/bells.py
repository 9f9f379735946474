"""Synthetic bells for the harnesses (Tests/JACK, Tests/Web, Benchmarks/jack-peers.py): step bells,
16-bit mono WAV files, and reading back the 32-bit float WAV files bellkeys records. Needs numpy.
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


def read_float_wav(path, rate):
    """(frames, channels) float32 from a WAV of 32-bit floats (format 3, or extensible) at `rate`."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", f"{path}: not a WAV file"
    position, channels, samples = 12, None, None
    while position + 8 <= len(data):
        kind, size = data[position:position + 4], int.from_bytes(data[position + 4:position + 8], "little")
        body = data[position + 8:position + 8 + size]
        if kind == b"fmt ":
            tag, channels, found = (int.from_bytes(body[0:2], "little"), int.from_bytes(body[2:4], "little"),
                                    int.from_bytes(body[4:8], "little"))
            bits = int.from_bytes(body[14:16], "little")
            if tag == 0xFFFE:
                tag = int.from_bytes(body[24:26], "little")
            assert tag == 3 and bits == 32 and found == rate, \
                f"{path}: format {tag}, {bits} bits, {found} Hz; expected 32-bit float at {rate}"
        elif kind == b"data":
            samples = np.frombuffer(body, dtype="<f4")
        position += 8 + size + (size & 1)
    return samples.reshape(-1, channels)
