"""SoundFont 2 files for the peer benchmarks: one preset (bank 0, program 0) holding one
instrument, its zones over 16-bit samples.

    import sf2
    left = sf2.Sample("bellL", frames, 48000, root=60, kind="left", link=1)
    right = sf2.Sample("bellR", other, 48000, root=60, kind="right", link=0)
    sf2.write(path, [left, right], [sf2.Zone(0, (55, 66), pan=-500), sf2.Zone(1, (55, 66), pan=500)])

A sample's `frames` are 16-bit little-endian mono PCM (a stereo sample is two samples, a left
and a right, each naming the other in `link`, sample types 4 and 2 as SoundFont 2.04 section
7.10 has them); each is followed by 46 zero frames, as the spec asks. `loop` is (start, end)
in frames from the sample's start, `end` the first frame after the loop (the spec's
dwEndloop); without it the loop points are the sample's start and end. A zone's generators
are written keyRange first and sampleID last (spec section 9.4): keyRange(43), pan(17),
sampleModes(54), overridingRootKey(58), releaseVolEnv(38), each only when given, then any
others by number; its modulators go to imod.

Used by Benchmarks/make-soundfont.py, Benchmarks/transposition.py,
Benchmarks/transposed-peers.py and Tests/SoundFont/live.py, each with this folder on sys.path. Python 3 standard library only.
"""
import struct

SAMPLE_TYPES = {"mono": 1, "right": 2, "left": 4}


class Sample:
    def __init__(self, name, frames, rate, root, kind="mono", link=0, loop=None, correction=0):
        assert len(frames) % 2 == 0 and kind in SAMPLE_TYPES
        self.name, self.frames, self.rate, self.root = name, bytes(frames), rate, root
        self.kind, self.link, self.loop, self.correction = kind, link, loop, correction


class Zone:
    """`keys`: (lowest, highest); `root`: overridingRootKey; `loop_mode`: sampleModes (1 loops
    continuously); `release`: releaseVolEnv in timecents; `pan`: -500 (left) to 500 (right);
    `generators`: {generator number: signed amount} more, written before sampleID;
    `modulators`: [(source, destination, amount, amount source, transform)], the zone's imod."""

    def __init__(self, sample, keys, root=None, loop_mode=None, release=None, pan=None, generators=None,
                 modulators=None):
        self.sample, self.keys, self.root = sample, keys, root
        self.loop_mode, self.release, self.pan = loop_mode, release, pan
        self.generators, self.modulators = generators or {}, modulators or []


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


def encode(samples, zones, preset="bellkeys bells", instrument="bells", name=None):
    """The whole file as bytes. `name` (INAM) defaults to the preset's name."""
    smpl = bytearray()
    headers = []
    for s in samples:
        start = len(smpl) // 2
        smpl += s.frames + b"\0" * 92            # 46 zero frames after each sample, as the spec asks
        end = start + len(s.frames) // 2
        loop_start, loop_end = (start + s.loop[0], start + s.loop[1]) if s.loop else (start, end)
        headers.append(struct.pack("<20sIIIIIbbHH", zstr(s.name), start, end, loop_start, loop_end,
                                   s.rate, s.root, s.correction, s.link, SAMPLE_TYPES[s.kind]))
    headers.append(struct.pack("<20sIIIIIbbHH", zstr("EOS"), 0, 0, 0, 0, 0, 0, 0, 0, 0))

    igen, ibag, imod = [], [], []
    for z in zones:
        ibag.append(struct.pack("<HH", len(igen), len(imod)))
        imod += [struct.pack("<HHhHH", *m) for m in z.modulators]
        igen.append(struct.pack("<HBB", 43, z.keys[0], z.keys[1]))
        if z.pan is not None:
            igen.append(struct.pack("<Hh", 17, z.pan))
        if z.loop_mode is not None:
            igen.append(struct.pack("<HH", 54, z.loop_mode))
        if z.root is not None:
            igen.append(struct.pack("<Hh", 58, z.root))
        if z.release is not None:
            igen.append(struct.pack("<Hh", 38, z.release))
        igen += [struct.pack("<Hh", g, v) for g, v in sorted(z.generators.items())]
        igen.append(struct.pack("<HH", 53, z.sample))
    ibag.append(struct.pack("<HH", len(igen), len(imod)))
    igen.append(struct.pack("<HH", 0, 0))
    inst = [struct.pack("<20sH", zstr(instrument), 0), struct.pack("<20sH", zstr("EOI"), len(zones))]
    # Preset: one zone pointing at instrument 0.
    pgen = [struct.pack("<HH", 41, 0), struct.pack("<HH", 0, 0)]
    pbag = [struct.pack("<HH", 0, 0), struct.pack("<HH", 1, 0)]
    phdr = [struct.pack("<20sHHHIII", zstr(preset), 0, 0, 0, 0, 0, 0),
            struct.pack("<20sHHHIII", zstr("EOP"), 0, 0, 1, 0, 0, 0)]
    mod_end = struct.pack("<HHhHH", 0, 0, 0, 0, 0)
    pdta = list_chunk(b"pdta", [
        chunk(b"phdr", b"".join(phdr)), chunk(b"pbag", b"".join(pbag)), chunk(b"pmod", mod_end),
        chunk(b"pgen", b"".join(pgen)), chunk(b"inst", b"".join(inst)), chunk(b"ibag", b"".join(ibag)),
        chunk(b"imod", b"".join(imod) + mod_end), chunk(b"igen", b"".join(igen)), chunk(b"shdr", b"".join(headers))])
    info = list_chunk(b"INFO", [chunk(b"ifil", struct.pack("<HH", 2, 1)), chunk(b"isng", b"EMU8000\0"),
                                chunk(b"INAM", (name or preset).encode("ascii") + b"\0")])
    sdta = list_chunk(b"sdta", [chunk(b"smpl", bytes(smpl))])
    body = b"sfbk" + info + sdta + pdta
    return b"RIFF" + struct.pack("<I", len(body)) + body


def write(path, samples, zones, **names):
    with open(path, "wb") as f:
        f.write(encode(samples, zones, **names))
