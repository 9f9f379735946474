"""The tests onsets, channels, order-after and bufsize: every note on its frame, whatever its
offset in its cycle, the order of the clients or the period."""
import subprocess
import time

import numpy as np

from analysis import HOLES, LOST, compare, jump, onsets_ok
from closing import closing_line
from bells import step_bell
from common import PERIOD, RATE, WRAP, bellkeys_lines, check, folder_for, frame
from files import write_map
from takes import compare_take, perform, probe_ok, render, stopped_ok


def onset_schedule():
    """64 notes 3584 frames (~75 ms) apart on the 13 keys at many velocities, at offsets
    37k mod PERIOD of their cycles (T0 is a cycle boundary; at 64 frames, every offset once),
    then four pairs sharing a cycle (first and last frame, neighbours, across the middle)."""
    events, notes = [], []
    for k in range(64):
        at = 4800 // PERIOD * PERIOD + k * 3584 + (k * 37) % PERIOD
        note, velocity = 60 + k % 13, 20 + (k * 53) % 108
        events.append((at, 0x90, note, velocity))
        notes.append((at, jump(onset_level(note), velocity)))
    base = 4800 // PERIOD * PERIOD + 64 * 3584
    half = PERIOD // 2
    for j, (a, b) in enumerate([(0, PERIOD - 1), (10, 11), (half - 1, half), (PERIOD - 2, PERIOD - 1)]):
        first, second = (base + j * 3584 + a, 0x90, 60 + j, 100), (base + j * 3584 + b, 0x90, 72 - j, 90)
        events += [first, second]
        notes += [(first[0], jump(onset_level(60 + j), 100)), (second[0], jump(onset_level(72 - j), 90))]
    return events, notes


def onset_level(note):
    return 16384 - 512 * (note - 60)


def onset_map(folder):
    # 40 ms at a level of its own per key, then 20 ms down to silence: 60 ms, less than the notes' spacing.
    return write_map(folder, {n: step_bell(onset_level(n), 1920, 960) for n in range(60, 73)})


def test_onsets():
    folder = folder_for("onsets")
    map_path = onset_map(folder)
    events, notes = onset_schedule()
    take = perform(folder, map_path, events, 5.4)
    stopped_ok("onsets", take)
    if not probe_ok("onsets", take):
        return
    sent = take.summary["events"]
    offsets = sorted({offset for _, _, offset in sent})
    as_scheduled = all(offset == frame % PERIOD for frame, _, offset in sent)
    check(as_scheduled and 0 in offsets and PERIOD - 1 in offsets and len(offsets) >= 64,
          f"onsets: the {len(sent)} events went out at {len(offsets)} different offsets in their {PERIOD}-frame cycles "
          f"({'every one of 0 to 63' if offsets == list(range(64)) else f'0 to {PERIOD - 1}'}), each its frame's")
    onsets_ok("onsets", take.audio, notes)
    compare_take("onsets", take, events, lambda notes, n: render(folder, map_path, notes, 2, n))


def test_channels():
    """--skip-drums in the JACK process callback: notes on channel 10 (each 17 frames after a
    note of channel 1) are left out; the take is the render of the other notes, bit for bit,
    and the closing line counts the drums as not played."""
    folder = folder_for("channels")
    map_path = onset_map(folder)
    events, notes = onset_schedule()
    events, notes = events[:20], notes[:20]
    drums = [(at + 17, 0x99, note, 127) for at, _, note, _ in events[::2]]
    take = perform(folder, map_path, sorted(events + drums), 2.2, extra=("--skip-drums",))
    stopped_ok("channels", take)
    if not probe_ok("channels", take):
        return
    onsets_ok("channels", take.audio, notes, what=" of channel 1")
    compare_take("channels", take, events, lambda notes, n: render(folder, map_path, notes, 2, n))
    counted = f"JACK MIDI messages {len(events)} (not played {len(drums)})"
    fields = closing_line(take.log)[1] or {}
    # (Less any events that never reached bellkeys, by its own count: see probe_ok. The take's
    # comparison with the render of channel 1's notes alone shows no drum sounded.)
    lost_ok = LOST[0] > 0 and fields.get("midi", -1) <= len(events) and fields.get("not_played", -1) <= len(drums) \
        and fields.get("midi", 0) + fields.get("not_played", 0) + LOST[0] == len(events) + len(drums)
    check(counted in take.log or lost_ok,
          f"channels: the {len(drums)} drum notes were not played ({counted!r} in: {bellkeys_lines(take.log)})"
          + (f"; {LOST[0]} events never reached bellkeys" if LOST[0] else ""))


def test_order_after():
    folder = folder_for("order-after")
    map_path = onset_map(folder)
    events, notes = onset_schedule()
    take = perform(folder, map_path, events, 5.4, order="after")
    stopped_ok("order-after", take)
    if not probe_ok("order-after", take):
        return
    # JACK2 makes the MIDI connection, which closes a loop, a feedback connection: bellkeys reads
    # the sender's buffer before the sender fills it, so it gets each cycle's events a cycle late.
    onsets_ok("order-after", take.audio, notes, delay=PERIOD, what=" (the sender after bellkeys)")
    compare_take("order-after", take, events, lambda notes, n: render(folder, map_path, notes, 2, n), shift=PERIOD)


def test_bufsize():
    """The period changed twice mid-take (jack_bufsize to twice, then four times the period):
    every note on its frame, and the take equal to the render, before and after each change.

    When a change takes effect is the server's: jackd applies jack_bufsize at once, PipeWire
    when its graph gets to it, and now and then it drops a request made while it is settling
    (one CI run saw 1.1 s twice). So the test waits for the server's word, asking again every
    0.25 s, asks for the second change 1 s after the first is in force, and ends the take 1.2 s
    after the second (the probe's SIGUSR1), with notes every 0.1 s all along, two 5 frames apart
    every half second. Where the server's frame time skips at a change (JACK2 advances it by the
    old period, though no cycle is missed), a note due in the skipped frames goes out at the
    start of the next cycle (the probe says where): it is checked there, and counted."""
    folder = folder_for("bufsize")
    # 0.2 s at a quarter of full scale, then 0.6 s down to silence: bells ring across each change.
    map_path = write_map(folder, {n: step_bell(8192, frame(0.2), frame(0.6)) for n in range(60, 73)})
    longest_seconds = 30.0   # the take ends when the second change has been in force 1.2 s
    events, k = [], 0
    for tenth in range(int(longest_seconds * 10)):
        at = frame(tenth / 10, (k * 29) % 256)
        events.append((at, 0x90, 60 + (k * 5) % 13, 30 + (k * 37) % 61))
        k += 1
        if tenth % 5 == 3:   # two notes 5 frames apart
            events.append((at + 5, 0x90, 60 + (k * 5) % 13, 90))
            k += 1
    changes, waits = [], []

    def current_size():
        shown = subprocess.run([*WRAP, "jack_bufsize"], capture_output=True, text=True, timeout=10).stdout.split()
        return int(shown[0]) if shown and shown[0].isdigit() else None

    def resize(frames, deadline):
        """Asks for `frames` a period until the server says it has them, asking again every
        0.25 s, until `deadline` (monotonic seconds: the take's end)."""
        started, asked, done = time.monotonic(), 0, None
        while time.monotonic() < deadline:
            done = subprocess.run([*WRAP, "jack_bufsize", str(frames)], capture_output=True, text=True, timeout=10)
            asked += 1
            again = time.monotonic() + 0.25
            while time.monotonic() < again and current_size() != frames:
                time.sleep(0.02)
            if current_size() == frames:
                break
        changes.append((frames, done.returncode if done else None,
                        (done.stdout.strip() or done.stderr.strip()) if done else "never asked: the take's time was up"))
        waits.append((frames, time.monotonic() - started, asked))

    def both_changes(bellkeys):
        deadline = time.monotonic() + longest_seconds - 3
        resize(2 * PERIOD, deadline)
        time.sleep(1.0)
        resize(4 * PERIOD, deadline)
        time.sleep(1.2)

    try:
        take = perform(folder, map_path, events, longest_seconds, channels=1, actions=[(1.2, lambda _: None)],
                       until=both_changes)
    finally:
        subprocess.run([*WRAP, "jack_bufsize", str(PERIOD)], capture_output=True, timeout=10)
    stopped_ok("bufsize", take)
    if not probe_ok("bufsize", take, late_in_resizes=True):
        return
    s = take.summary
    sizes = [n for _, n in s["periods"]]
    check(sizes == [PERIOD, 2 * PERIOD, 4 * PERIOD] and all(status == 0 for _, status, _ in changes),
          f"bufsize: jack_bufsize {2 * PERIOD} at 1.2 s, {4 * PERIOD} 1 s after the server said the first "
          f"({changes}): periods seen " + ", ".join(f"{n} from frame {at}" for at, n in s["periods"])
          + "; the server said the new size after " + ", ".join(f"{w * 1000:.0f} ms ({n}, asked {a}x)" for n, w, a in waits)
          + f"; the take ended at {s['frames'] / RATE:.2f} s")
    # The holes at the changes are taken out of the recording; an event then sounds where the
    # probe sent it (its cycle's start plus its offset), less the frames skipped before it.
    skips = [(at, skipped) for at, skipped, resize in s["jumps"] if resize]
    print("info  bufsize: the server's frame time skipped " + ", ".join(f"{n} frames at frame {at}" for at, n in skips)
          + " (where the period changed); no cycle was missed: the hole is taken out of the recording")
    keep = np.ones(len(take.audio), bool)
    for at, skipped in skips:
        keep[at:at + skipped] = False
    audio = take.audio[keep]

    def unskipped(at):
        return at - sum(n for g, n in skips if g <= at)
    HOLES[:] = [(unskipped(a), unskipped(b)) for a, b in HOLES]
    sent = {(due, cycle + offset) for due, cycle, offset in s["events"]}
    played = [(unskipped(cycle + offset), status, d1, d2)
              for (at, status, d1, d2), (due, cycle, offset) in zip(events, s["events"])]
    late = [(due, where) for due, where in sent if where != due]
    # (Notes due in a skip go out together at the next cycle's start: one onset, their sum.)
    summed = {}
    for at, _, _, velocity in played:
        summed[at] = summed.get(at, 0) + jump(8192, velocity)
    levels = sorted(summed.items())
    first = unskipped(skips[0][0]) if skips else len(audio)
    onsets_ok("bufsize", audio, [n for n in levels if n[0] < first], what=" before the first change")
    onsets_ok("bufsize", audio, [n for n in levels if n[0] >= first],
              what=f" after it (at {2 * PERIOD} and {4 * PERIOD} frames a period; {len(late)} due in the frames the "
                   f"server skipped, checked at the next cycle's start where the probe sent them)")
    compare("bufsize", audio, render(folder, map_path, played, 1, len(audio)), what="the recording, holes taken out,")
