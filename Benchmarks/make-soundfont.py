#!/usr/bin/env python3
"""Builds a SoundFont 2 file from a bellkeys map and its samples, for the peer benchmark.

    python3 Benchmarks/make-soundfont.py Samples/tags.json bells.sf2

One preset (bank 0, program 0) with one instrument: a zone per mapped key, its sample played
at its own pitch (root key = the key), no loop, so FluidSynth and TiMidity++ play exactly the
one-shots that bellkeys plays. Needs 16-bit mono WAV samples (the bundled bells are).
Standard library only; the file is written by Tools/python/sf2.py.
"""
import json
import os
import sys
import wave

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tools", "python"))
import sf2  # noqa: E402  (the SoundFont writer)

NOTE_NAMES = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}


def note_of(key):
    if "tag" in key:
        return key["tag"] - 100 + 60
    note = key["note"]
    if isinstance(note, int):
        return note
    pc, rest = NOTE_NAMES[note[0].upper()], note[1:]
    while rest and rest[0] in "#b":
        pc += 1 if rest[0] == "#" else -1
        rest = rest[1:]
    return (int(rest) + 1) * 12 + pc


def main(map_path, out_path):
    with open(map_path) as f:
        bell_map = json.load(f)
    folder = os.path.dirname(os.path.abspath(map_path))
    samples, zones = [], []
    for index, key in enumerate(bell_map["keys"]):
        note = note_of(key)
        with wave.open(os.path.join(folder, key["sample"])) as w:
            assert w.getsampwidth() == 2 and w.getnchannels() == 1, "16-bit mono WAV needed"
            rate, frames = w.getframerate(), w.readframes(w.getnframes())
        samples.append(sf2.Sample(f"bell{note}", frames, rate, root=note))
        # Release of 2 s (timecents 1200) keeps note-off from cutting early.
        zones.append(sf2.Zone(index, (note, note), root=note, release=1200))
    sf2.write(out_path, samples, zones)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
