"""A take: bellkeys on JACK while the probe sends the schedule and records it; the offline render
of the same events; the lines on how the probe and bellkeys ran."""
import json
import os
import signal
import subprocess
import time

import numpy as np

from analysis import HOLES
from common import BELLKEYS, PERIOD, PIPEWIRE_PID, PROBE, RATE, WRAP, bellkeys_lines, check, tail
from files import read_float_wav, write_midi, write_schedule


class Take:
    """One performance: the probe's summary and exit status, the recording (frames, channels),
    and how bellkeys ended (status, ms after SIGTERM, its output)."""


def perform(folder, map_path, events, seconds, channels=2, order="before", actions=(), extra=(), env=None):
    """Plays `events` through bellkeys on JACK and records `seconds` from T0. `actions`:
    [(seconds after T0, function of bellkeys' process)], run from here at about that time."""
    schedule = os.path.join(folder, "schedule.txt")
    write_schedule(schedule, events)
    take_path = os.path.join(folder, "take.f32")
    if os.path.exists(take_path):
        os.remove(take_path)
    log = open(os.path.join(folder, "bellkeys.log"), "w")
    take, probe = Take(), None
    bellkeys = subprocess.Popen([*WRAP, BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", map_path,
                                 "--jack-connect", "none", "--channels", str(channels), *extra],
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
                           "--channels", str(channels), "-q"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"bellkeys render failed ({done.returncode}): {done.stderr.strip()}")
    return read_float_wav(wav)


def probe_ok(name, take):
    """One line on the probe's run: what JACK did. False if there is nothing to analyse.

    jackd runs synchronously (-S): it waits for every client, so a gap in the probe's frame
    times is a failure. PipeWire has no such mode: when the machine is busy the probe's own
    clients miss cycles (bellkeys' timeline stays whole: the notes after a gap still land on
    their frames), so there a gap's cycles, with a cycle either side, are left out of the checks
    (HOLES) and counted, and the rest must be exact."""
    HOLES.clear()
    s = take.summary
    if s is None or take.audio is None:
        check(False, f"{name}: the probe failed (exit {take.status}): {tail(chr(10).join(take.notes))}; "
                     f"bellkeys {'running' if take.bellkeys_running else f'exited {take.bellkeys_status}'}: {bellkeys_lines(take.log)}")
        return False
    periods = ", ".join(f"{n} from frame {at}" for at, n in s["periods"] if at >= 0) or "none changed"
    if PIPEWIRE_PID and (s["gaps"] or s["late"]):
        HOLES[:] = [(at - 2 * PERIOD, at + max(skipped, 0) + 2 * PERIOD) for at, skipped, resize in s["jumps"] if not resize]
        print(f"info  {name}: PipeWire did not run the probe in {s['gaps']} cycles ({s['gap_frames']} frames), "
              f"{s['late']} events sent late: {len(HOLES)} stretches left out of the checks", flush=True)
        ok = take.status in (0, 1) and s["sent"] == s["scheduled"] and s["write_errors"] == 0
        check(ok and s["gap_frames"] < s["frames"] // 10,
              f"{name}: probe: T0 {s['t0']}, period {s['periods'][0][1]} ({periods}), {s['recorded']} of {s['frames']} "
              f"frames recorded, {s['sent']} of {s['scheduled']} events sent, {s['xruns']} xruns reported by the server")
        return True
    check(take.status == 0 and s["gaps"] == 0 and s["late"] == 0 and s["sent"] == s["scheduled"] and s["write_errors"] == 0,
          f"{name}: probe exit {take.status}: T0 {s['t0']}, period {s['periods'][0][1]} ({periods}), "
          f"{s['recorded']} of {s['frames']} frames recorded, {s['gaps']} gaps, {s['sent']} of {s['scheduled']} events sent, "
          f"{s['late']} late, {s['xruns']} xruns reported by the server")
    return True


def stopped_ok(name, take):
    status = take.bellkeys_status
    ended = f"was killed by signal {-status}" if isinstance(status, int) and status < 0 else f"exited with status {status}"
    check(take.bellkeys_running and status == 0 and take.stop_ms < 1000,
          f"{name}: bellkeys {ended} {take.stop_ms:.0f} ms after SIGTERM"
          + ("" if take.bellkeys_running else f" (it had already stopped: {bellkeys_lines(take.log)})"))
