#!/usr/bin/env python3
"""Builds a SoundFont 2 file from a bellkeys map and its samples, for the peer benchmark.

    python3 Benchmarks/make-soundfont.py Samples/tags.json bells.sf2

One preset (bank 0, program 0) with one instrument: a zone per mapped key, its sample played
at its own pitch (root key = the key), no loop, so FluidSynth and TiMidity++ play exactly the
one-shots that bellkeys plays. Needs 16-bit mono WAV samples (the bundled bells are).
Standard library only.
"""
import json
import os
import struct
import sys
import wave


def chunk(tag, data):
    # Odd data is zero-padded inside the chunk: SF2 strings have even sizes, and TiMidity++
    # does not skip RIFF pad bytes.
    if len(data) % 2:
        data += b"\0"
    return tag + struct.pack("<I", len(data)) + data


def list_chunk(kind, parts):
    return chunk(b"LIST", kind + b"".join(parts))


def zstr(text, size=20):
    return text.encode("ascii")[: size - 1].ljust(size, b"\0")


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
    smpl = bytearray()
    headers, zones = [], []
    for index, key in enumerate(bell_map["keys"]):
        note = note_of(key)
        with wave.open(os.path.join(folder, key["sample"])) as w:
            assert w.getsampwidth() == 2 and w.getnchannels() == 1, "16-bit mono WAV needed"
            rate, frames = w.getframerate(), w.readframes(w.getnframes())
        start = len(smpl) // 2
        smpl += frames + b"\0" * 92            # 46 zero frames after each sample, as the spec asks
        end = start + len(frames) // 2
        headers.append(struct.pack("<20sIIIIIbbHH", zstr(f"bell{note}"), start, end, start, end,
                                   rate, note, 0, 0, 1))
        zones.append((note, index))
    headers.append(struct.pack("<20sIIIIIbbHH", zstr("EOS"), 0, 0, 0, 0, 0, 0, 0, 0, 0))

    # Instrument generators per zone: keyRange(43), overridingRootKey(58), releaseVolEnv(38),
    # sampleID(53) last. Release of 2 s (timecents 1200) keeps note-off from cutting early.
    igen, ibag = [], []
    for note, sample_id in zones:
        ibag.append(struct.pack("<HH", len(igen), 0))
        igen.append(struct.pack("<HBB", 43, note, note))
        igen.append(struct.pack("<Hh", 58, note))
        igen.append(struct.pack("<Hh", 38, 1200))
        igen.append(struct.pack("<HH", 53, sample_id))
    ibag.append(struct.pack("<HH", len(igen), 0))
    igen.append(struct.pack("<HH", 0, 0))
    inst = [struct.pack("<20sH", zstr("bells"), 0), struct.pack("<20sH", zstr("EOI"), len(zones))]
    # Preset: one zone pointing at instrument 0.
    pgen = [struct.pack("<HH", 41, 0), struct.pack("<HH", 0, 0)]
    pbag = [struct.pack("<HH", 0, 0), struct.pack("<HH", 1, 0)]
    phdr = [struct.pack("<20sHHHIII", zstr("bellkeys bells"), 0, 0, 0, 0, 0, 0),
            struct.pack("<20sHHHIII", zstr("EOP"), 0, 0, 1, 0, 0, 0)]
    mod_end = struct.pack("<HHhHH", 0, 0, 0, 0, 0)
    pdta = list_chunk(b"pdta", [
        chunk(b"phdr", b"".join(phdr)), chunk(b"pbag", b"".join(pbag)), chunk(b"pmod", mod_end),
        chunk(b"pgen", b"".join(pgen)), chunk(b"inst", b"".join(inst)), chunk(b"ibag", b"".join(ibag)),
        chunk(b"imod", mod_end), chunk(b"igen", b"".join(igen)), chunk(b"shdr", b"".join(headers))])
    info = list_chunk(b"INFO", [chunk(b"ifil", struct.pack("<HH", 2, 1)), chunk(b"isng", b"EMU8000\0"),
                                chunk(b"INAM", b"bellkeys bells\0")])
    sdta = list_chunk(b"sdta", [chunk(b"smpl", bytes(smpl))])
    body = b"sfbk" + info + sdta + pdta
    with open(out_path, "wb") as f:
        f.write(b"RIFF" + struct.pack("<I", len(body)) + body)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
