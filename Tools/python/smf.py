"""Standard MIDI Files for the test harnesses and benchmarks: format 0, one track.

    import smf
    smf.write(path, [(0, smf.message(0x90, 60, 100)), (480, smf.message(0x80, 60, 0))], division=480)

An event is (tick, bytes): its absolute time in ticks and the message as it goes in the file
(`message` for a channel message, `meta` for a meta event). Events are written in tick order;
events at the same tick keep the order they are given in. `division` is ticks per quarter note.
`tempo` (microseconds per quarter) is written as a set-tempo event at tick 0; without it a
reader takes 500000 (120 bpm), so at 24000 ticks per quarter one tick is one frame at 48 kHz.
The end-of-track event is at tick `end`, or at the last event if that is later.

Used by Tests/JACK, Tests/VM/analyze.py, Benchmarks/peers.py and Tools/compare-renders, each
with this folder on sys.path. Python 3 standard library only.
"""


def varlen(n):
    """`n` as a variable-length quantity: 7 bits a byte, most significant first."""
    if n < 0:
        raise ValueError(f"a negative delta time ({n}): events out of order")
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    return bytes(out)


def message(status, data1, data2=0):
    """A channel message: two bytes for program change and channel pressure (0xC0..0xDF), else
    three."""
    return bytes([status, data1] if status & 0xE0 == 0xC0 else [status, data1, data2])


def meta(kind, data):
    """A meta event: 0xFF, its kind (0x01 text, 0x2F end of track, 0x51 tempo, ...), its data."""
    return b"\xff" + bytes([kind]) + varlen(len(data)) + data


def track(events, tempo=None, end=0):
    """The body of an MTrk chunk: the tempo, `events` at their ticks, the end of track."""
    body = bytearray()
    if tempo is not None:
        body += varlen(0) + meta(0x51, tempo.to_bytes(3, "big"))
    now = 0
    for tick, data in sorted(events, key=lambda event: event[0]):
        body += varlen(tick - now) + data
        now = tick
    body += varlen(max(0, end - now)) + meta(0x2F, b"")
    return bytes(body)


def encode(events, division, tempo=None, end=0):
    """A whole format-0 file: MThd (format 0, one track, `division` ticks per quarter), MTrk."""
    body = track(events, tempo, end)
    return (b"MThd" + (6).to_bytes(4, "big") + (0).to_bytes(2, "big") + (1).to_bytes(2, "big")
            + division.to_bytes(2, "big") + b"MTrk" + len(body).to_bytes(4, "big") + body)


def write(path, events, division, tempo=None, end=0):
    """Writes `encode(events, division, tempo, end)` to `path`."""
    with open(path, "wb") as f:
        f.write(encode(events, division, tempo, end))
