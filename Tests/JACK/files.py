"""A test's files: synthetic bells, the map, the probe's schedule, the MIDI file; reading the
render's WAV."""
import json
import os

import numpy as np
import smf

import bells
from bells import write_wav
from common import RATE


def tone_bell(note, seconds=0.45):
    """16-bit samples: the note's pitch, at half scale, dying away (time constant 0.15 s)."""
    t = np.arange(int(seconds * RATE)) / RATE
    x = 0.5 * np.exp(-t / 0.15) * np.sin(2 * np.pi * 440 * 2 ** ((note - 69) / 12) * t)
    return np.round(x * 32767).astype("<i2")


def write_map(folder, bells, **fields):
    """bells: {note: samples, or (samples, {key fields})}. Returns the map's path."""
    keys = []
    for note, bell in sorted(bells.items()):
        samples, extra = bell if isinstance(bell, tuple) else (bell, {})
        name = f"bell-{note}.wav"
        write_wav(os.path.join(folder, name), samples, RATE)
        keys.append({"note": note, "sample": name, **extra})
    path = os.path.join(folder, "map.json")
    with open(path, "w") as f:
        json.dump({"comment": "synthetic bells for Tests/JACK", **fields, "keys": keys}, f, indent=1)
    return path


def write_schedule(path, events):
    with open(path, "w") as f:
        f.write("# frame status data1 data2 (frames from T0)\n")
        for at, status, d1, d2 in events:
            f.write(f"{at} {status} {d1} {d2}\n")


def write_midi(path, events, end=0):
    """Format 0, 24000 ticks per quarter, no tempo event (500000 us per quarter): tick = frame.
    The track ends at frame `end` (or at its last event, if later)."""
    smf.write(path, [(at, smf.message(status, d1, d2)) for at, status, d1, d2 in events], division=24000, end=end)


def read_float_wav(path):
    """(frames, channels) float32 from a 32-bit float WAV at the tests' rate."""
    return bells.read_float_wav(path, RATE)
