"""A take: bellkeys on JACK while the probe sends the schedule and records it; the offline render
of the same events; the lines on how the probe and bellkeys ran."""
import itertools
import json
import os
import signal
import subprocess
import time

import numpy as np

from analysis import HOLES, LOST, compare
from closing import closing_line, skipped_frames
from common import BELLKEYS, PERIOD, PIPEWIRE_PID, PROBE, RATE, WRAP, bellkeys_lines, check, tail
from files import read_float_wav, write_midi, write_schedule


class Take:
    """One performance: the probe's summary and exit status, the recording (frames, channels),
    and how bellkeys ended (status, ms after SIGTERM, its output)."""


def perform(folder, map_path, events, seconds, channels=2, order="before", actions=(), extra=(), env=None,
            until=None):
    """Plays `events` through bellkeys on JACK and records `seconds` from T0. `actions`:
    [(seconds after T0, function of bellkeys' process)], run from here at about that time.
    `until`: a function of bellkeys' process, run after the actions; when it returns the take
    ends (at the end of the cycle then: the probe's SIGUSR1), and `seconds` is only the longest
    it may last."""
    schedule = os.path.join(folder, "schedule.txt")
    write_schedule(schedule, events)
    take_path = os.path.join(folder, "take.f32")
    if os.path.exists(take_path):
        os.remove(take_path)
    log = open(os.path.join(folder, "bellkeys.log"), "w")
    take, probe = Take(), None
    # No settings file, unless the test names its own (XDG_CONFIG_HOME in `env`).
    settings = () if env and "XDG_CONFIG_HOME" in env else ("--no-config",)
    bellkeys = subprocess.Popen([*WRAP, BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", map_path,
                                 "--jack-connect", "none", "--channels", str(channels), *settings, *extra],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                env=dict(os.environ, **(env or {})))
    try:
        probe = subprocess.Popen([*WRAP, PROBE, "--target", "bellkeys", "--channels", str(channels), "--schedule", schedule,
                                  "--seconds", str(seconds), "--out", take_path, "--order", order],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        notes = []
        for line in probe.stderr:
            notes.append(line.rstrip())
            if line.startswith("probe: T0 "):
                t0_wall = time.monotonic() + int(line.split(", ")[1].split()[0]) / RATE
                for at, action in actions:
                    time.sleep(max(0.0, t0_wall + at - time.monotonic()))
                    action(bellkeys)
                if until:
                    until(bellkeys)
                    probe.send_signal(signal.SIGUSR1)
                break
        out, err = probe.communicate(timeout=seconds + 40)
        take.notes = notes + err.splitlines()
        take.status = probe.returncode
        lines = [l for l in out.splitlines() if l.startswith("{")]
        take.summary = json.loads(lines[-1]) if lines else None
        with open(os.path.join(folder, "probe.json"), "w") as f:
            f.write(out)
        take.audio = np.fromfile(take_path, dtype="<f4").reshape(-1, channels) if os.path.exists(take_path) else None
    finally:
        if probe and probe.poll() is None:     # interrupted
            probe.kill()
            probe.wait()
        take.bellkeys_running = bellkeys.poll() is None
        started = time.monotonic()
        if take.bellkeys_running:
            bellkeys.send_signal(signal.SIGTERM)
        try:
            take.bellkeys_status = bellkeys.wait(timeout=5)
        except subprocess.TimeoutExpired:
            bellkeys.kill()
            take.bellkeys_status = "hung (killed after 5 s)"
            bellkeys.wait()
        take.stop_ms = (time.monotonic() - started) * 1000
        log.close()
        take.log = open(os.path.join(folder, "bellkeys.log")).read()
    return take


def render(folder, map_path, events, channels, length, name="render"):
    """Renders `events` with the live engine's blocks (--block 64), the MIDI file lasting at least
    `length` frames, to the next multiple of 64. The engine mixes on a fixed grid of 64-frame
    blocks wherever calls and events cut them, and so does a live take on 64-frame periods; only
    the render's tail after the file's end goes in 64-frame calls from that end, off the grid,
    so the file ends on the grid, after the recording."""
    midi, wav = os.path.join(folder, f"{name}.mid"), os.path.join(folder, f"{name}.wav")
    write_midi(midi, events, end=-(-length // PERIOD) * PERIOD)
    done = subprocess.run([BELLKEYS, "render", midi, "-o", wav, "--map", map_path, "--format", "f32", "--block", "64",
                           "--channels", str(channels), "-q", "--no-config"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"bellkeys render failed ({done.returncode}): {done.stderr.strip()}")
    return read_float_wav(wav)


def probe_ok(name, take, late_in_resizes=False):
    """One line on the probe's run: what JACK did. False if there is nothing to analyse.
    `late_in_resizes`: events due in the frames the server's clock skipped at a period change
    (no cycle of the probe's covers them) go out at the next cycle's start, and are not a fault.

    jackd runs synchronously (-S): it waits for every client, so a gap in the probe's frame
    times with no xrun is a failure. But when a cycle overruns, jackd skips the graph while it
    is unfinished (JackEngine::Process: no client runs; CI once saw 2 gaps in a take with 267
    xruns, every note on its frame and the take equal to the render). PipeWire has no
    synchronous mode: when the machine is busy the probe's own clients miss cycles. Either way
    bellkeys' timeline stays whole (the notes after a gap still land on their frames), so a
    gap's cycles, with a cycle either side, are left out of the checks (HOLES) and counted, and
    the rest must be exact: compare_take matches every stretch between holes bit for bit."""
    HOLES.clear()
    LOST[0] = 0
    s = take.summary
    if s is None or take.audio is None:
        check(False, f"{name}: the probe failed (exit {take.status}): {tail(chr(10).join(take.notes))}; "
                     f"bellkeys {'running' if take.bellkeys_running else f'exited {take.bellkeys_status}'}: {bellkeys_lines(take.log)}")
        return False
    periods = ", ".join(f"{n} from frame {at}" for at, n in s["periods"] if at >= 0) or "none changed"
    fields = closing_line(take.log)[1]
    if PIPEWIRE_PID and fields:
        # PipeWire can run the probe's sender and not bellkeys in a cycle (a hole), or, with the
        # sender after bellkeys (order-after's loop), the sender twice before bellkeys reads:
        # an event written then never reaches bellkeys. Its own count says how many.
        LOST[0] = max(0, s["sent"] - fields["midi"] - fields["not_played"])
        if LOST[0]:
            print(f"info  {name}: {LOST[0]} of the {s['sent']} events sent never reached bellkeys (its count: "
                  f"JACK MIDI messages {fields['midi']}, not played {fields['not_played']})", flush=True)
    overrun = not PIPEWIRE_PID and s["gaps"] and s["xruns"] and not s["timed_out"]
    if (PIPEWIRE_PID and (s["gaps"] or s["late"])) or overrun:
        HOLES[:] = [(at - 2 * PERIOD, at + max(skipped, 0) + 2 * PERIOD) for at, skipped, resize in s["jumps"] if not resize]
        jumps = ", ".join(f"{skipped} at {at}" for at, skipped, resize in s["jumps"] if not resize)
        who = "jackd, with xruns, did not run the graph" if overrun else "PipeWire did not run the probe"
        print(f"info  {name}: {who} in {s['gaps']} cycles ({s['gap_frames']} frames: {jumps}), "
              f"{s['late']} events sent late: {len(HOLES)} stretches left out of the checks", flush=True)
        ok = take.status in (0, 1) and s["sent"] == s["scheduled"] and s["write_errors"] == 0
        check(ok and s["gap_frames"] < s["frames"] // 10,
              f"{name}: probe: T0 {s['t0']}, period {s['periods'][0][1]} ({periods}), {s['recorded']} of {s['frames']} "
              f"frames recorded, {s['sent']} of {s['scheduled']} events sent, {s['xruns']} xruns reported by the server")
        return True
    skips = [(at, at + n) for at, n, resize in s["jumps"] if resize] if late_in_resizes else []
    late_elsewhere = [due for due, cycle, offset in s["events"]
                      if cycle + offset != due and not any(a <= due < b for a, b in skips)]
    allowed = s["late"] > 0 and not late_elsewhere and take.status == 1 and not s["timed_out"]
    check((take.status == 0 or allowed) and s["gaps"] == 0 and not late_elsewhere and s["sent"] == s["scheduled"]
          and s["write_errors"] == 0,
          f"{name}: probe exit {take.status}: T0 {s['t0']}, period {s['periods'][0][1]} ({periods}), "
          f"{s['recorded']} of {s['frames']} frames recorded, {s['gaps']} gaps, {s['sent']} of {s['scheduled']} events sent, "
          f"{s['late']} late" + (f" ({len(late_elsewhere)} outside the frames skipped at a period change)" if skips else "")
          + f", {s['xruns']} xruns reported by the server")
    return True


def bellkeys_skipped(take):
    """The frames of the server's clock bellkeys was not run in, less those it was run in twice,
    and its closing line's words on it (closing.skipped_frames)."""
    return skipped_frames(take.log)


def without_lost(audio, events, rendering, shift, lost):
    """`events` less the `lost` ones that never reached bellkeys (a take with no hole): where
    the take first differs from the render, the events sent in the 2,048 frames before (4 of
    PipeWire's periods) are taken out one by one, the nearest first, until the take matches for
    2,048 frames past it; as they were if none does (compare then says where)."""
    for _ in range(lost):
        expected = rendering(events, len(audio))
        n = min(len(audio) - shift, len(expected))
        differs = np.nonzero(np.abs(audio[shift:shift + n].astype(np.float64) - expected[:n, :audio.shape[1]]).max(axis=1))[0]
        if len(differs) == 0:
            return events
        first = int(differs[0])
        near = sorted((e for e in events if first - 2048 <= e[0] <= first), key=lambda e: first - e[0])
        for e in near[:8]:
            rest = [x for x in events if x is not e]
            trial = rendering(rest, len(audio))
            m = min(n, len(trial))
            left = np.nonzero(np.abs(audio[shift:shift + m].astype(np.float64) - trial[:m, :audio.shape[1]]).max(axis=1))[0]
            if len(left) == 0 or left[0] > first + 2048:
                events = rest
                break
        else:
            return events
    return events


# The most renders compare_take tries before it calls a take different: a take that matches
# takes a few a stretch, one that does not would try every way again at each stretch before it.
RENDERS = 240


def compare_take(name, take, events, rendering, shift=0, what="the recording", maybe=()):
    """The take against the offline render of `events` (`rendering(events, frames)` makes it),
    delayed by `shift` frames, less the HOLES (compare's check line).

    PipeWire, when its driver wakes late, runs no client for a few cycles: the probe misses them
    (a hole, see probe_ok) and so does bellkeys, which counts them in its closing line. bellkeys
    then goes on where it stopped: from there its own timeline runs behind the take's by the
    frames it was skipped, less those it was run twice at one frame time (PipeWire catching
    up, which the probe does not see), and a note sent after the hole reaches it in the cycle
    it was sent, at its offset. So each stretch of the take between holes is the render of the
    notes at bellkeys' own frames (a note's frame less how far behind bellkeys was when it came),
    read that far behind. How far is found stretch by stretch, whole periods from the stretch
    before, the probe's jump first; a note in a hole is tried on either side of it, and as lost
    (a note sent in a cycle PipeWire then did not run bellkeys in never reaches it: bellkeys'
    count of JACK MIDI messages is short by one), and a period either way (in a cycle the probe's
    clock skipped and then ran again, PipeWire may run its sender on the other side of bellkeys:
    seen in order-after, a note sounding a cycle early). `maybe`: events in holes that may not
    have sounded at all (a phone's strike found where the recording is torn), tried without
    and with. Every stretch must match bit for bit; the frames in the holes are not compared."""
    audio, period = take.audio, take.summary["periods"][0][1]
    _, said = bellkeys_skipped(take)
    if not HOLES and LOST[0]:
        events = without_lost(audio, events, rendering, shift, LOST[0])
        what += f" (less the {LOST[0]} events that never reached bellkeys)"
    if not HOLES:
        # No hole in the take (a skip before T0 moves bellkeys' timeline and the notes alike).
        compare(name, audio, rendering(events, len(audio)), shift=shift, what=what)
        return
    events = sorted(list(events) + list(maybe), key=lambda e: e[0])
    cuts = []
    for a, b in sorted((max(a, 0), min(max(b, 0), len(audio))) for a, b in HOLES):
        if cuts and a <= cuts[-1][1]:
            cuts[-1] = (cuts[-1][0], max(cuts[-1][1], b))
        elif b > a:
            cuts.append((a, b))
    stretches = [(lo, hi) for lo, hi in zip([0] + [b for _, b in cuts], [a for a, _ in cuts] + [len(audio)]) if hi > lo]
    # A note due in a hole went out late, where the probe sent it.
    sent = {}
    for due, cycle, offset in take.summary["events"]:
        sent.setdefault(due, []).append(cycle + offset)
    timed = [((sent[e[0]].pop(0) if sent.get(e[0]) and any(a <= e[0] < b for a, b in cuts) else e[0]),) + tuple(e[1:])
             for e in events]
    jumps = [(at, n) for at, n, resize in take.summary["jumps"] if not resize]
    failed, renders = [], [0]

    # How far bellkeys' timeline moves at a hole: the probe's jump there, less cycles bellkeys was
    # run twice or the probe alone was skipped in (both seen), or plus cycles bellkeys alone was
    # skipped in, which its closing line bounds. Notes lost in holes: as many as bellkeys' count
    # of JACK MIDI messages falls short of what the probe sent, no more, no fewer.
    fields = closing_line(take.log)[1] or {}
    repeated = fields.get("repeated_frames", 0) // period
    extra = max(0, fields.get("skipped_frames", 0) - sum(n for _, n in jumps)) // period
    lost = LOST[0]

    def matches(index, behind, placed, extra, lost):
        """Each way stretch `index` can match: (frames behind, the notes placed so far, the
        cycles bellkeys alone may yet have been skipped in, the notes yet to be lost)."""
        lo, hi = stretches[index]
        seen = stretches[index - 1][1] if index else 0
        jumped = sum(n for at, n in jumps if seen <= at < hi)
        tries = [(behind, extra)] if lo == 0 else (
            [(behind + jumped - k * period, extra) for k in range(max(jumped, 0) // period + repeated + 1)]
            + [(behind + jumped + k * period, extra - k) for k in range(1, extra + 1)])
        in_hole = [e for e in timed if seen <= e[0] < lo]
        inside = [e for e in timed if lo <= e[0] < hi]
        if not placed and not in_hole:
            tries = tries[:1]    # nothing sounds from before: how far behind does not show yet
        # A note in the hole most likely reached bellkeys on the side of the probe's jump it was
        # sent on; that side is tried first.
        jump_at = min((at for at, n in jumps if seen <= at < hi), default=lo)
        first = True
        for by, left in tries:
            sides = [tuple(dict.fromkeys(((behind, by) if e[0] < jump_at else (by, behind))
                                         + (by + period, by - period)))
                     + ((None,) if lost or e in maybe else ()) for e in in_hole]
            for chosen in itertools.product(*sides):
                dropped = sum(side is None and e not in maybe for e, side in zip(in_hole, chosen))
                notes = placed + [(e[0] - side,) + e[1:] for e, side in zip(in_hole, chosen) if side is not None] \
                    + [(e[0] - by,) + e[1:] for e in inside]
                if dropped > lost or any(note[0] < 0 for note in notes):
                    continue
                if renders[0] >= RENDERS:
                    return
                renders[0] += 1
                # In the order sent (a program change on a note's frame goes first): sorted by frame
                # alone, which keeps that order. (No note yet: silence, which render refuses to write.)
                notes.sort(key=lambda note: note[0])
                rendered = rendering(notes, hi + 16 * period) if notes else np.zeros((1, audio.shape[1]))
                at = lo - shift - by
                expected = np.zeros_like(audio[lo:hi])
                got = rendered[max(at, 0):max(at + hi - lo, 0), :audio.shape[1]]
                expected[max(0, -at):max(0, -at) + len(got)] = got
                difference = float(np.abs(audio[lo:hi].astype(np.float64) - expected).max(initial=0))
                if difference == 0 and rendered.shape[1] == audio.shape[1]:
                    yield by, notes, left, lost - dropped
                elif first:
                    failed.append((lo, hi, difference, [t for t, _ in tries]))
                first = False

    def search(index, behind, placed, extra, lost):
        """How far behind each stretch from `index` on is, or None. A stretch of notes that hold
        a level (the tests' step bells) can match more than one way: each is followed on."""
        if index == len(stretches):
            return [] if lost == 0 else None
        for by, notes, left, unlost in matches(index, behind, placed, extra, lost):
            rest = search(index + 1, by, notes, left, unlost)
            if rest is not None:
                return [by] + rest
        return None

    found = search(0, 0, [], extra, lost)
    delayed = f" delayed {shift} frames" if shift else ""
    if found is None:
        lo, hi, difference, tries = max(failed, default=(0, len(audio), float("nan"), [0]))
        gave_up = f"gave up after {renders[0]} renders; " if renders[0] >= RENDERS else f"{renders[0]} renders; "
        said_why = (f"{name}: {what} could not be matched stretch by stretch between the {len(cuts)} holes "
                    f"(bellkeys: {said}; {lost} notes lost by its count): from frame {lo} to {hi} it differs however "
                    f"far behind bellkeys is ({gave_up}tried {tries}; max |difference| {difference:.3g} at {tries[0]})")
        # A busy machine can skip bellkeys where the probe ran (inside a stretch, which no one
        # offset then fits) dozens of times a take. What is then required is what was before the
        # whole take was compared: the take up to the first hole is the render, bit for bit, and
        # a first hole in the first half second, with nothing before it, fails.
        first = cuts[0][0]
        if first < RATE // 2:
            check(False, said_why + f"; and the first hole is at frame {first}, in the first half second")
            return
        print(f"info  {said_why}: the take is compared up to the first hole, frame {first}", flush=True)
        compare(name, audio[:first], rendering([e for e in events if e[0] < first], first), shift=shift,
                what=what + " up to the first hole", holes=[])
        return
    check(True, f"{name}: {what} equals the offline render{delayed}: {len(audio)} frames x {audio.shape[1]} channels "
                f"in {len(stretches)} stretches between the {len(cuts)} holes the probe missed "
                f"({sum(b - a for a, b in cuts)} frames), bellkeys behind the take by {found} frames "
                f"(bellkeys: {said}; {lost} notes lost in holes), bit for bit ({renders[0]} renders tried); "
                f"peak {np.abs(audio).max():.4f}")


def record_ok(name, take, events, recording):
    """--record holds what bellkeys played, bit for bit. The recording starts with bellkeys'
    first cycle, the take at T0: T0 is found in the recording from the first note. Then each
    stretch of the take between holes is found in the recording, a whole number of periods on
    from the stretch before (bellkeys skipped by PipeWire plays on from where it stopped, see
    compare_take), and must equal it; the frames it moved on by in all must be those
    bellkeys says it was skipped, less those repeated (and less any before the first note)."""
    recorded = read_float_wav(recording)
    start = next((i for i in range(len(recorded)) if abs(recorded[i, 0]) > 0), None)
    shift = None if start is None else start - events[0][0]
    if shift is None or shift < 0:
        check(False, f"{name}: the recording holds the first note ({recorded.shape[0]} frames)")
        return
    period = take.summary["periods"][0][1]
    cuts = sorted((max(a, 0), max(b, 0)) for a, b in HOLES)
    stretches = [(lo, hi) for lo, hi in zip([0] + [b for _, b in cuts], [a for a, _ in cuts] + [len(take.audio)]) if hi > lo]
    behind, compared, differing, worst = 0, 0, [], 0.0

    def difference(lo, hi, by):
        at = lo + shift - by
        if at < 0 or at + (hi - lo) > len(recorded):
            return None
        return float(np.abs(recorded[at:at + hi - lo] - take.audio[lo:hi]).max(initial=0))
    for lo, hi in stretches:
        hi = min(hi, len(recorded) - shift + behind)
        if hi <= lo:
            continue
        # This stretch's frames behind the take: as the last stretch's, or a whole number of
        # periods more (the take's hole) or fewer (a cycle run twice), the first that matches.
        tries = [behind] + [behind + k * period for k in range(1, 9)] + [behind - k * period for k in range(1, 9)]
        found = next((by for by in tries if difference(lo, hi, by) == 0), None)
        if found is None:
            differing.append((lo, hi))
            worst = max(worst, difference(lo, hi, behind) or float("inf"))
            continue
        behind = found
        compared += hi - lo
    # bellkeys' count also holds cycles skipped before the first note (a busy server's lead-in,
    # which T0 found from that note already takes in): what it says is at least the offsets
    # found, by whole periods.
    net, said = bellkeys_skipped(take)
    lead_in = net - behind
    check(not differing and compared > 0.89 * len(take.audio) - sum(b - a for a, b in cuts)
          and lead_in >= 0 and lead_in % period == 0,
          f"{name}: --record holds what was played, bit for bit: {compared} frames compared in {len(stretches)} stretches"
          + (f", {len(differing)} differing ({differing[:3]}, max |difference| {worst:.3g})" if differing else "")
          + f"; the recording ran {behind} frames behind the take by the end"
          + (f", and {lead_in} before the first note" if lead_in else "")
          + f" (bellkeys: {said}) ({recorded.shape[0]} frames recorded from bellkeys' start)")


def stopped_ok(name, take):
    status = take.bellkeys_status
    ended = f"was killed by signal {-status}" if isinstance(status, int) and status < 0 else f"exited with status {status}"
    check(take.bellkeys_running and status == 0 and take.stop_ms < 1000,
          f"{name}: bellkeys {ended} {take.stop_ms:.0f} ms after SIGTERM"
          + ("" if take.bellkeys_running else f" (it had already stopped: {bellkeys_lines(take.log)})"))
