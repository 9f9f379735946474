"""The tests room, classroom and dynamics: what the notes sound like live, against the render."""
import json
import os
import socket
import wave
import sys
import time

import numpy as np

from analysis import jump, unchecked
from bells import step_bell
from common import PERIOD, RATE, ROOT, bellkeys_lines, check, folder_for, frame
from bells import write_wav
from files import tone_bell, write_map
from takes import compare_take, perform, probe_ok, render, stopped_ok


def test_room():
    """The room live: tone bells on a table (pan -0.6 to 0.6), the hall at mix 0.3, velocity
    timbre, and CC10 (pan) and CC91 (reverb send) moved while the bells and the hall ring. The
    take must be `render --block 64` of the same MIDI, bit for bit: the reverb, the side buses
    and the filtered voices run the same in a JACK process callback as offline."""
    folder = folder_for("room")
    bells = {n: (tone_bell(n), {"pan": round(-0.6 + 0.1 * (n - 60), 2)}) for n in range(60, 73)}
    map_path = write_map(folder, bells, reverb="hall", reverbMix=0.3, velocityTimbre=1)
    start = 4800 // PERIOD * PERIOD
    events = []
    for k in range(26):
        at = start + k * 2400 + (k * 29) % PERIOD
        events.append((at, 0x90, 60 + (k * 5) % 13, 30 + (k * 37) % 98))
    # Mid-take, on channel 1: the table turned to the left, then the room's send down and up.
    events += [(start + 20_000 + 13, 0xB0, 10, 20), (start + 34_000 + 40, 0xB0, 91, 30),
               (start + 48_000 + 7, 0xB0, 91, 127), (start + 52_000, 0xB0, 10, 64)]
    events.sort()
    take = perform(folder, map_path, events, 2.4)
    stopped_ok("room", take)
    if not probe_ok("room", take):
        return
    left, right = take.audio[:, 0], take.audio[:, 1]
    last = events[-1][0] + 4800
    check(bool(np.any(left[last:] != 0)) and bool(np.any(left != right)),
          "room: the take is stereo (left and right differ) and the hall rings on after the last strike")
    compare_take("room", take, events, lambda notes, n: render(folder, map_path, notes, 2, n))


def test_sets():
    """Sets chosen by program change live: three sets of tone bells (the plain ones, dry; a
    fifth higher in a hall, bank 1; damped ones in a church on program 9), with program changes
    (and bank selects) between notes, at a note's own frame before it, and one for a program
    no set has. The take must be `render --block 64` of the same MIDI, bit for bit: each note
    in its set, at its frame, and each set's bells ringing on in their own room."""
    folder = folder_for("sets")
    sets = []
    for name, program, bank, shift, fields in (("plain", 0, None, 0, {}),
                                              ("hall", 5, 1, 7, {"reverb": "hall", "reverbMix": 0.4}),
                                              ("church", 9, None, -5, {"reverb": "church", "noteOff": "damp"})):
        keys = []
        for n in range(60, 73):
            sample = f"{name}-{n}.wav"
            write_wav(os.path.join(folder, sample), tone_bell(n + shift), RATE)
            keys.append({"note": n, "sample": sample})
        sets.append({"name": name, "program": program, **({"bank": bank} if bank is not None else {}), **fields,
                     "keys": keys})
    map_path = os.path.join(folder, "sets.json")
    with open(map_path, "w") as f:
        json.dump({"comment": "synthetic sets for Tests/JACK", "sets": sets}, f, indent=1)
    start = 4800 // PERIOD * PERIOD
    events = []
    choices = [(0, 0, 0), (0, 1, 5), (None, None, 9), (0, 0, 33), (0, 0, 0), (0, 1, 5), (0, 0, 9)]
    for k in range(28):
        at = start + k * 2200 + (k * 31) % PERIOD
        if k % 4 == 0:
            high, low, program = choices[(k // 4) % len(choices)]
            # On the note's own frame, before it (every third time), else between notes.
            when = at if k % 12 == 0 else at - 700 - (k * 17) % 300
            if high is not None:
                events += [(when, 0xB0, 0, high), (when, 0xB0, 32, low)]
            events.append((when, 0xC0, program, 0))
        note = 60 + (k * 5) % 13
        events.append((at, 0x90, note, 40 + (k * 37) % 88))
        events.append((at + 1500, 0x80, note, 0))
    events.sort(key=lambda e: e[0])  # (stable: a program change stays before the note of its frame)
    take = perform(folder, map_path, events, 2.4)
    stopped_ok("sets", take)
    if not probe_ok("sets", take):
        return
    check("program change chose no set (the last: program 33 on channel 1)" in take.log,
          f"sets: bellkeys told of the program no set has: {bellkeys_lines(take.log)}")
    compare_take("sets", take, events, lambda notes, n: render(folder, map_path, notes, 2, n))


def test_transpose():
    """A keyboard an octave low, moved up by --transpose 12 from a settings file (the take's own
    XDG_CONFIG_HOME): every note from JACK's midi_in sounds an octave up, at its frame, and is
    damped by its note-off. The take must be `render --block 64` of the notes written an octave
    up, bit for bit."""
    folder = folder_for("transpose")
    bells = {n: (tone_bell(n), {"noteOff": "damp", "releaseSeconds": 0.05}) for n in range(60, 73)}
    map_path = write_map(folder, bells)
    config = os.path.join(folder, "config")
    os.makedirs(os.path.join(config, "bellkeys"), exist_ok=True)
    with open(os.path.join(config, "bellkeys", "bellkeys.conf"), "w") as f:
        f.write("# a keyboard whose middle C plays C3\n--transpose 12\n")
    start = 4800 // PERIOD * PERIOD
    events = []
    for k in range(20):
        at = start + k * 2400 + (k * 29) % PERIOD
        note = 48 + (k * 5) % 13
        events += [(at, 0x90, note, 30 + (k * 37) % 98), (at + 1800, 0x80, note, 0)]
    events.sort(key=lambda e: e[0])
    take = perform(folder, map_path, events, 2.4, env={"XDG_CONFIG_HOME": config})
    stopped_ok("transpose", take)
    if not probe_ok("transpose", take):
        return
    said = f"settings from {config}/bellkeys/bellkeys.conf: --transpose 12"
    check(said in take.log and "transposed up 12 semitones" in take.log,
          f"transpose: the start-up report names the settings file and the transposition: {bellkeys_lines(take.log)}")
    compare_take("transpose", take, events, lambda notes, n: render(
        folder, map_path, [(at, status, note + 12, value) for at, status, note, value in notes], 2, n))


def test_instrument():
    """An SFZ instrument live: regions transposed up and down from three tone samples (one of them
    stereo), velocity layers with a crossfade, round robin, a loop, envelopes with a release, a
    release sample, a two-pole filter that opens with velocity, and pitch bend moved (its range
    set by RPN 0) while notes ring. The take must be `render --block 64` of the same MIDI, bit for
    bit: the pitched voices run the same in a JACK process callback as offline."""
    folder = folder_for("instrument")
    write_wav(os.path.join(folder, "low.wav"), tone_bell(55, 0.8), RATE)
    write_wav(os.path.join(folder, "high.wav"), tone_bell(76, 0.8), RATE)
    # A stereo sample: the tone on the left, a fifth above on the right.
    left, right = tone_bell(67, 0.8), tone_bell(74, 0.8)
    with wave.open(os.path.join(folder, "wide.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(np.stack([left, right], 1).astype("<i2").tobytes())
    sfz = os.path.join(folder, "instrument.sfz")
    with open(sfz, "w") as f:
        f.write("// a test instrument\n<global> ampeg_attack=0.002 ampeg_release=0.3 fil_veltrack=2400\n"
                "<group> lokey=48 hikey=63 pitch_keycenter=55\n"
                "<region> sample=low.wav lovel=1 hivel=80 xfout_lovel=60 xfout_hivel=80\n"
                "<region> sample=low.wav lovel=60 hivel=127 xfin_lovel=60 xfin_hivel=80 tune=-30 cutoff=1500\n"
                "<group> lokey=64 hikey=72 pitch_keycenter=67 seq_length=2\n"
                "<region> sample=wide.wav seq_position=1 pan=-40\n"
                "<region> sample=high.wav seq_position=2 transpose=-9 loop_mode=loop_continuous loop_start=12000 loop_end=20999\n"
                "<region> key=74 sample=high.wav pitch_keycenter=76 trigger=release volume=-6\n")
    start = 4800 // PERIOD * PERIOD
    events = [(start, 0xB0, 101, 0), (start, 0xB0, 100, 0), (start + 1, 0xB0, 6, 5)]
    for k in range(30):
        at = start + 600 + k * 2000 + (k * 37) % PERIOD
        note = [48, 55, 63, 64, 67, 72, 74, 60][k % 8]
        events.append((at, 0x90, note, 20 + (k * 41) % 108))
        events.append((at + 900 + (k * 13) % 300, 0x80, note, 0))
    for k, value in enumerate([12000, 16383, 2000, 8192, 9000]):
        events.append((start + 7000 + k * 9000 + (k * 11) % PERIOD, 0xE0, value & 127, value >> 7))
    events.sort()
    take = perform(folder, sfz, events, 2.0)
    stopped_ok("instrument", take)
    if not probe_ok("instrument", take):
        return
    check(bool(np.any(take.audio[:, 0] != take.audio[:, 1])), "instrument: the take is stereo (the wide sample, the pan)")
    compare_take("instrument", take, events, lambda notes, n: render(folder, sfz, notes, 2, n))


def test_classroom():
    """`--web` on JACK: a MIDI keyboard (the probe) plays on the left while a phone on loopback
    rings a bell panned right and the server is flooded (a reconnect storm, garbage, messages
    past the limit). Every phone strike must sound, and be answered within 20 ms; the take must
    be `render --block 64` of the keyboard's notes and the phone's (at the frames they
    sounded), bit for bit: the keyboard's onsets unchanged to the frame during the flood."""
    sys.path.insert(0, os.path.join(ROOT, "Tests", "Web"))
    import threading
    import wsclient
    folder = folder_for("classroom")
    level = 2048
    bells = {n: (step_bell(level, frame(0.2), frame(0.05)), {"pan": -1}) for n in range(60, 72)}
    bells[72] = (step_bell(level, frame(0.08), frame(0.02)), {"pan": 1})
    map_path = write_map(folder, bells)
    events = [(frame(0.1 + 0.1 * k, (k * 23) % PERIOD), 0x90, 60 + (k * 7) % 12, 40 + (k * 13) % 88) for k in range(32)]
    sent, queued, flood = [], [], {"connections": 0, "garbage": 0, "closed": 0}

    def storm(port, stop):
        # A reconnect storm and garbage, bounded in count and time.
        deadline = time.monotonic() + 2.5
        for round_ in range(60):
            if stop.is_set() or time.monotonic() > deadline:
                break
            socks = []
            for k in range(16):
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=1)
                    flood["connections"] += 1
                    if k % 3 == 0:
                        s.sendall(os.urandom(200))
                        flood["garbage"] += 1
                    elif k % 3 == 1:
                        s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    socks.append(s)
                except OSError:
                    pass
            for s in socks:
                s.close()
            try:
                c = wsclient.Client(port)
                for _ in range(120):     # over 50 a second: closed
                    c.send({"type": "ping", "sent": 1})
                c.send_frame(b"{not json")
                c.close()
                flood["closed"] += 1
            except (OSError, wsclient.Closed):
                pass

    def phone(bellkeys):
        port, code, _ = wsclient.classroom_address(open(os.path.join(folder, "bellkeys.log")).read())
        client = wsclient.Client(port)
        client.join(code, "Ada")
        stop = threading.Event()
        flooder = threading.Thread(target=storm, args=(port, stop))
        flooder.start()
        try:
            for k in range(10):
                time.sleep(0.2)
                sent.append(time.monotonic())
                client.send({"type": "strike", "note": 72, "velocity": 100})
                client.recv_type("rang", timeout=1)
                queued.append((time.monotonic() - sent[-1]) * 1000)
        finally:
            stop.set()
            flooder.join(timeout=5)
            client.close()

    take = perform(folder, map_path, events, 3.4, actions=[(0.25, phone)],
                   extra=("--web", "--web-address", "127.0.0.1", "--web-port", "0"))
    stopped_ok("classroom", take)
    if not probe_ok("classroom", take):
        return
    right = np.concatenate([[0.0], take.audio[:, 1].astype(np.float64)])
    threshold = 0.4 * jump(level, 100) * 2 ** 0.5
    # (Where the probe missed cycles the recording can be torn: a jump there may be no strike.)
    found = [int(at) for at in np.nonzero(np.diff(right) > threshold)[0]]
    onsets, torn = [at for at in found if not unchecked(at)], [at for at in found if unchecked(at)]
    # Timing: each strike's answer ("rang", sent once the control thread has queued it for the
    # engine) against its send. (The strikes' spacing as sounded is not compared with their
    # spacing as sent: the dummy server's frames fall behind the wall clock at each of its
    # xruns, tens in a take on this machine with or without the flood.)
    check(len(sent) == 10 and len(onsets) <= len(sent) <= len(onsets) + len(torn) and len(queued) == len(sent)
          and max(queued) < 20,
          f"classroom: {len(onsets)} of {len(sent)} phone strikes sounded (right)"
          + (f", and {len(torn)} jumps where the probe missed cycles" if torn else "")
          + "; tap to engine and back (rang) median "
          f"{np.median(queued) if queued else float('nan'):.2f} ms, max {max(queued, default=float('nan')):.2f} ms (bound 20)"
          f"; bellkeys said: {bellkeys_lines(take.log)[-300:]}")
    # The keyboard's notes and the phone's at the frames they sounded: the whole take must be
    # their render, bit for bit (voices are mixed in batches, so the phone's bell is in the
    # reference too, not subtracted).
    phone_events = [(at, 0x90, 72, 100) for at in onsets]
    # Under PipeWire the probe may miss cycles (HOLES, see probe_ok): a keyboard note due in one
    # goes out late, where the probe says it sent it (compare_take), and a jump in a hole may or
    # may not be a strike.
    compare_take("classroom", take, sorted(events + phone_events), lambda notes, n: render(folder, map_path, notes, 2, n),
                 maybe=[(at, 0x90, 72, 100) for at in torn],
                 what=f"the take (keyboard left, phone right) during a flood of {flood['connections']} connections, "
                      f"{flood['garbage']} of garbage, {flood['closed']} clients past the message limit,")


def test_dynamics():
    folder = folder_for("dynamics")
    release = 0.05
    bells = {n: tone_bell(n) for n in range(60, 73)}
    bells[72] = (bells[72], {"noteOff": "ring"})
    map_path = write_map(folder, bells, noteOff="damp", releaseSeconds=release)
    events = [
        (frame(0.00, 5), 0x90, 60, 127),
        (frame(0.50, 17), 0x90, 60, 64),     # velocity: (64/127)^2
        (frame(1.00, 29), 0xB0, 7, 50),      # CC7 on a silent channel: at once
        (frame(1.00, 41), 0x90, 60, 127),
        (frame(1.25, 3), 0xB0, 7, 100),      # CC7 while the bell sounds: a 64-frame ramp
        (frame(1.50, 60), 0x90, 64, 127),
        (frame(1.60, 7), 0x80, 64, 0),       # damped
        (frame(2.00, 1), 0xB0, 64, 127),     # pedal down
        (frame(2.00, 33), 0x90, 65, 110),
        (frame(2.05, 2), 0x80, 65, 0),       # held by the pedal
        (frame(2.20, 45), 0xB0, 64, 0),      # pedal up: damped now
        (frame(2.50, 0), 0x91, 67, 127),     # channel 2
        (frame(2.50, 63), 0x91, 69, 100),
        (frame(2.60, 31), 0xB1, 123, 0),     # all notes off: both damped
        (frame(3.00, 12), 0x91, 72, 127),    # a ringing key ignores its note-off
        (frame(3.05, 50), 0x81, 72, 0),
        (frame(3.40, 20), 0xB0, 11, 64),     # expression
        (frame(3.40, 21), 0x90, 62, 127),    # the same key twice in one cycle: two bells
        (frame(3.40, 22), 0x90, 62, 100),
        (frame(3.50, 40), 0x90, 62, 0),      # velocity 0: note-off
    ]
    take = perform(folder, map_path, events, 3.8, channels=3)
    stopped_ok("dynamics", take)
    if not probe_ok("dynamics", take):
        return
    x = np.abs(take.audio[:, 0].astype(np.float64))
    peak = lambda a, b: float(x[a:b].max()) if b > a else 0.0

    def silent_after(start, end):
        loud = np.nonzero(x[start:end] > 0)[0]
        return (int(loud[-1]) + 1 if len(loud) else 0) / RATE * 1000

    reference = peak(frame(0, 5), frame(0.4, 5))
    velocity = peak(frame(0.5, 17), frame(0.9, 17)) / reference
    check(abs(velocity / (64 / 127) ** 2 - 1) < 0.01, f"dynamics: velocity 64 against 127 gives {velocity:.4f} (square law: {(64 / 127) ** 2:.4f})")
    cc7 = peak(frame(1.0, 41), frame(1.24)) / peak(frame(0, 5), frame(0.24, -36))
    check(abs(cc7 / 0.25 - 1) < 0.01, f"dynamics: CC7 50 against 100 gives {cc7:.4f} (0.2500)")
    damped = silent_after(frame(1.6, 7), frame(1.95))
    check(0 < damped <= release * 1000 + 1, f"dynamics: a damped bell is silent {damped:.1f} ms after its note-off (release {release * 1000:.0f} ms)")
    held = peak(frame(2.17), frame(2.2, 45))
    pedal = silent_after(frame(2.2, 45), frame(2.45))
    check(held > 0.01 and 0 < pedal <= release * 1000 + 1,
          f"dynamics: with the pedal down a released bell still sounds (peak {held:.3f} in the 30 ms before the pedal lifts), "
          f"then is silent {pedal:.1f} ms after the pedal lifts")
    all_off = silent_after(frame(2.6, 31), frame(2.95))
    check(0 < all_off <= release * 1000 + 1, f"dynamics: all-notes-off silences two bells of channel 2 in {all_off:.1f} ms")
    ringing = peak(frame(3.1), frame(3.15))
    check(ringing > 0.01, f"dynamics: a ringing key's bell sounds on after its note-off (peak {ringing:.3f} 50-100 ms after it)")
    compare_take("dynamics", take, events, lambda notes, n: render(folder, map_path, notes, 3, n))
