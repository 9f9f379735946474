#!/usr/bin/env python3
"""bellkeys against FluidSynth's JACK driver, side by side on one private JACK server.

    python3 Benchmarks/jack-peers.py                 about 4 minutes
    python3 Benchmarks/jack-peers.py --rounds 3      parts b and c three times, interleaved; medians
    BELLKEYS=PATH python3 Benchmarks/jack-peers.py   another build (default .build/release/bellkeys)

One server for everything: jackd -n bellkeys-peers-PID -S -R -d dummy -r 48000 -p 64, its buffer size
changed with jack_bufsize for part a. Synchronous (-S), as in Tests/JACK/run: the server waits for
every client each cycle. Asynchronous, a client that is late on this VM (it is, every few
seconds) has its output recorded a cycle late: the probe hears silence where its cycle should be
and the note from the next cycle's first frame, an onset error that is JACK's, not the synth's.
Real-time (-R). Each synth runs alone on it, started afresh for each measurement, its outputs
unconnected unless said:

  bellkeys    bellkeys play --driver jack --no-ui -q --map MAP --jack-connect none
  FluidSynth  fluidsynth -a jack -m jack -R 0 -C 0 -r 48000 -o audio.jack.id=fluidsynth
              -o midi.jack.id=fluidsynth -o audio.jack.server=SERVER -o midi.jack.server=SERVER SF2
              (reverb and chorus off, as bellkeys has none; otherwise its defaults: gain 0.2,
              4th-order interpolation, per-voice filter, polyphony 256; its shell reads a pipe, for
              voice_count). Its MIDI and audio drivers share one JACK client, `fluidsynth`, with
              ports midi_00, left and right; the script gives them the aliases midi_in, out_1 and
              out_2, which JACK2 resolves like names, so the probe finds them as it finds bellkeys'.

a. Onset error at 64, 128 and 256 frames a period. The probe (Tests/JACK/probe.c, built into
   .build-bench/jack-peers/) sends note-ons at known frames, at offsets all over the cycle (0, 1,
   P/2, P-2, P-1 and 64 more), 75 ms apart, from a client that runs before the synth ("before"),
   and records the synth's left output. The bells: each key a step, its first sample already at
   full level (8192..16384 of 32768) for 40 ms, then 20 ms down to silence (Tests/JACK's onset bells);
   for FluidSynth the same samples as a SoundFont (Benchmarks/make-soundfont.py). Before each onset
   the output is exactly silent, so the onset is the first frame that is not 0, searched from one
   period before the sent frame; a note counts only if it was sent on its frame, the recording has
   no jump near it, and all is 0 before it. Error = onset frame - sent frame. FluidSynth starts a
   voice with an amplitude ramp across its first 64-frame block that begins at exactly 0, so its first
   frame is 0 and its first non-zero frame is the voice's second (measured: +1 at offset 0); the
   table shows the first non-zero frame, as for bellkeys, and says so.
b. CPU with 64 voices sounding: the bundled bells (8.3 to 12.6 s, 10.34 s on average; centred, dry and
   one timbre, as Samples/examples/plain.json has them, and the SoundFont of them), one strike every 10.34/64 s over 64 (key, channel) pairs (13 keys x channels 1-5), so that 64
   bells sound once the first has rung out (FluidSynth moves a voice to its release when the same
   key is struck again on the same channel, hence the channels). Process CPU (utime + stime from
   /proc/PID/stat, all threads; and the synth's JACK thread, the one with SCHED_FIFO, from
   /proc/PID/task) of the synth and of jackd over 20 s, from 13 s after the first strike (the longest bell has rung). Voices:
   bellkeys' peak from its closing line, FluidSynth's voice_count at both ends of the window.
c. Idle CPU, nothing sounding, 30 s each after 3 s to settle: jackd alone; jackd + bellkeys; jackd
   + FluidSynth (each synth's outputs connected to system:playback_1/2 with jack_connect, as when it
   plays to a sound card).

CPU figures are % of one core. With each window: the CPU of every other process (the probe and
this script left out), the hypervisor's steal, and the xruns jackd logged (synchronous, it logs
only the dummy driver's own late wake-ups, "JackTimedDriver::Process XRun"): this is a shared
2-core VM, and its neighbours show in every figure.
Needs jackd2, libjack-jackd2-dev, gcc, fluidsynth, python3-numpy.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(ROOT, ".build-bench", "jack-peers")
BELLKEYS = os.environ.get("BELLKEYS", os.path.join(ROOT, ".build", "release", "bellkeys"))
RATE = 48_000
NOTE_SPACING = 3584             # frames between onset notes: 75 ms, a multiple of every period
VOICE_SECONDS = 134.4 / 13     # the bundled bells' mean length (8.3 s for C5 to 12.6 s for C4)
WARM_SECONDS, CPU_SECONDS, IDLE_SECONDS, SETTLE_SECONDS = 13.0, 20.0, 30.0, 3.0

sys.path.insert(0, os.path.join(ROOT, "Tools", "python"))
import processes  # noqa: E402  (/proc's CPU figures, stopping a process, our jackd)
from bells import step_bell, write_wav  # noqa: E402
from processes import (CLOCK_TICKS, all_processes, comm_of, cpu_of_others, cpu_seconds, steal_percent,  # noqa: E402
                       steal_ticks, stop)


# Processes --------------------------------------------------------------------------------------

def thread_seconds(pid):
    """(real-time threads, other threads) utime + stime in seconds: JACK's process thread is the
    one with SCHED_FIFO (policy 1) or SCHED_RR (2)."""
    realtime = other = 0.0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            fields = open(f"/proc/{pid}/task/{task}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
        if fields[38] in ("1", "2"):
            realtime += seconds
        else:
            other += seconds
    return realtime, other


class Window:
    """CPU of some processes and of the machine between start() and stop()."""

    def __init__(self, pids, server, helpers=()):
        # helpers: processes of this benchmark left out of "other processes" (this script, the probe)
        self.pids, self.server, self.helpers = pids, server, set(helpers) | {os.getpid()}

    def start(self):
        self.cpu0 = {k: cpu_seconds(p) for k, p in self.pids.items()}
        self.threads0 = thread_seconds(self.pids["synth"]) if "synth" in self.pids else None
        self.all0, self.steal0 = all_processes(), steal_ticks()
        self.began = time.monotonic()
        return self

    def stop(self):
        self.seconds = time.monotonic() - self.began
        all1, steal1 = all_processes(), steal_ticks()
        self.percent = {}
        for k, p in self.pids.items():
            now = cpu_seconds(p)
            if now is not None and self.cpu0[k] is not None:
                self.percent[k] = (now - self.cpu0[k]) / self.seconds * 100
        threads1 = thread_seconds(self.pids["synth"]) if "synth" in self.pids else None
        self.threads = (tuple((b - a) / self.seconds * 100 for a, b in zip(self.threads0, threads1))
                        if self.threads0 and threads1 else None)
        # Every other process's CPU (those alive at both ends), and what the hypervisor took.
        mine = set(self.pids.values()) | self.helpers
        others = cpu_of_others(self.all0, all1, mine)
        self.other = sum(others.values()) / self.seconds * 100
        top = max(others, key=others.get, default=None)
        self.top_other = (f"{comm_of(top)} {others[top] / self.seconds * 100:.0f} %"
                          if top is not None and others[top] > 0.01 * self.seconds else None)
        self.steal = steal_percent(self.steal0, steal1)
        self.xruns = self.server.xruns(self.began, self.began + self.seconds)
        return self

    def cpu_text(self):
        text = f"jackd {self.percent.get('jackd', float('nan')):.2f} %"
        if "synth" in self.percent:
            text += f", synth {self.percent['synth']:.2f} %"
            if self.threads:
                text += f" (JACK thread {self.threads[0]:.2f} %, others {self.threads[1]:.2f} %)"
        return text

    def note(self):
        return (f"{self.seconds:.1f} s; other processes {self.other:.1f} %"
                + (f" (most: {self.top_other})" if self.top_other else "") + f", steal {self.steal:.1f} %, xruns {self.xruns}")


class Server(processes.Server):
    """Our jackd on the dummy backend (synchronous, real-time); its output lines stamped with
    time.monotonic() as they come."""

    def __init__(self, name, period):
        super().__init__(name, ["-S", "-R"], RATE, period, os.path.join(WORK, "jackd.log"))

    def xruns(self, start, end):
        """xrun lines (the driver's, and clients named late) jackd logged in [start, end)."""
        return sum(1 for at, t in self.lines if start <= at < end and ("Process XRun" in t or "was not finished" in t))

    def ports(self):
        done = subprocess.run(["jack_lsp"], env=self.env, capture_output=True, text=True, timeout=10)
        return set(done.stdout.split("\n"))

    def run(self, *command):
        return subprocess.run(list(command), env=self.env, capture_output=True, text=True, timeout=10)


class Synth:
    """bellkeys or FluidSynth on `server`, ready once its ports are there."""

    def __init__(self, kind, server, bells, connect_system=False):
        self.kind, self.server, self.voice_counts = kind, server, []
        self.log_path = os.path.join(WORK, f"{kind}.log")
        log = open(self.log_path, "w")
        if kind == "bellkeys":
            self.command = [BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", bells, "--jack-connect", "none"]
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            env=server.env)
            self.outputs, self.midi = ["bellkeys:out_1", "bellkeys:out_2"], "bellkeys:midi_in"
        else:
            self.command = ["fluidsynth", "-a", "jack", "-m", "jack", "-R", "0", "-C", "0", "-r", str(RATE),
                            "-o", "audio.jack.id=fluidsynth", "-o", "midi.jack.id=fluidsynth",
                            "-o", f"audio.jack.server={server.name}", "-o", f"midi.jack.server={server.name}", bells]
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=log, text=True, env=server.env)
            self.reader = threading.Thread(target=self.read, daemon=True)
            self.reader.start()
            self.outputs, self.midi = ["fluidsynth:left", "fluidsynth:right"], "fluidsynth:midi_00"
        log.close()
        try:
            self.set_up(connect_system)
        except BaseException:           # a signal too: the caller has no synth to stop yet
            self.stop()
            raise

    def set_up(self, connect_system):
        give_up = time.monotonic() + 15
        while not set(self.outputs + [self.midi]) <= self.server.ports():
            if self.process.poll() is not None or time.monotonic() > give_up:
                raise RuntimeError(f"{self.kind} did not start: {self.tail()}")
            time.sleep(0.2)
        if self.kind == "fluidsynth":
            for port, alias in zip(self.outputs + [self.midi], ["fluidsynth:out_1", "fluidsynth:out_2", "fluidsynth:midi_in"]):
                done = self.server.run("jack_alias", port, alias)
                if done.returncode != 0:
                    raise RuntimeError(f"jack_alias {port} {alias}: {done.stderr.strip()}")
        if connect_system:
            for port, playback in zip(self.outputs, ["system:playback_1", "system:playback_2"]):
                done = self.server.run("jack_connect", port, playback)
                if done.returncode != 0:
                    raise RuntimeError(f"jack_connect {port} {playback}: {done.stderr.strip()}")

    def read(self):
        for line in self.process.stdout:
            m = re.search(r"voice_count: (\d+)", line)
            if m:
                self.voice_counts.append(int(m.group(1)))

    def ask_voices(self):
        """FluidSynth only: asks its shell for voice_count (the answer lands in voice_counts)."""
        if self.kind == "fluidsynth" and self.process.poll() is None:
            self.process.stdin.write("voice_count\n")
            self.process.stdin.flush()

    def tail(self):
        lines = [l for l in open(self.log_path).read().splitlines() if l.strip()]
        return " | ".join(lines[-3:]) or "(nothing)"

    def stop(self):
        """Stops the synth; returns bellkeys' closing line (or None)."""
        if self.kind == "fluidsynth" and self.process.poll() is None:
            try:
                self.process.stdin.write("quit\n")
                self.process.stdin.close()
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        stop(self.process)
        text = open(self.log_path).read()
        m = re.search(r"bellkeys: stopped .*", text)
        return m.group(0) if m else None


# Files ------------------------------------------------------------------------------------------

def write_step_bells(folder):
    """Tests/JACK's onset bells: key n holds 16384 - 512 (n - 60) for 1920 frames, then falls to 0
    over 960. Returns the map's path."""
    keys = []
    for note in range(60, 73):
        name = f"step-{note}.wav"
        write_wav(os.path.join(folder, name), step_bell(16384 - 512 * (note - 60), 1920, 960), RATE)
        keys.append({"note": note, "sample": name})
    path = os.path.join(folder, "steps.json")
    with open(path, "w") as f:
        json.dump({"comment": "step bells for Benchmarks/jack-peers.py", "keys": keys}, f, indent=1)
    return path


def soundfont(map_path, name):
    path = os.path.join(WORK, name)
    subprocess.run([sys.executable, os.path.join(HERE, "make-soundfont.py"), map_path, path], check=True)
    return path


def write_schedule(path, events):
    with open(path, "w") as f:
        f.write("# frame status data1 data2 (frames from T0)\n")
        f.writelines(f"{at} {status} {d1} {d2}\n" for at, status, d1, d2 in events)


def onset_schedule(period):
    offsets = [0, 1, period // 2, period - 2, period - 1] + [(k * 37) % period for k in range(64)]
    # 4864 frames (0.1 s) is a whole number of periods of each size: T0 is a cycle boundary too.
    return [(4864 + k * NOTE_SPACING + offset, 0x90, 60 + k % 13, 100) for k, offset in enumerate(offsets)]


def voices_schedule(seconds):
    """A strike every 10.34/64 s over 64 (key, channel) pairs: 64 bells sound once the longest has rung."""
    step = int(VOICE_SECONDS * RATE / 64)
    return [(i * step, 0x90 | (i % 64) // 13, 60 + (i % 64) % 13, 100) for i in range(int(seconds * RATE / step))]


# The probe --------------------------------------------------------------------------------------

class Probe:
    """Runs the probe against `target`; `at_t0(seconds)` waits until that long after its T0."""

    def __init__(self, server, target, schedule, seconds, name):
        self.take_path = os.path.join(WORK, f"{name}.f32")
        self.command = [os.path.join(WORK, "probe"), "--target", target, "--channels", "2", "--schedule", schedule,
                        "--seconds", f"{seconds:.3f}", "--out", self.take_path, "--order", "before"]
        self.seconds = seconds
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=server.env)
        self.notes, self.t0 = [], None
        try:
            for line in self.process.stderr:
                self.notes.append(line.rstrip())
                if line.startswith("probe: T0 "):
                    self.t0 = time.monotonic() + int(line.split(", ")[1].split()[0]) / RATE
                    break
        finally:
            if self.t0 is None:
                stop(self.process)
        if self.t0 is None:
            raise RuntimeError(f"the probe did not start: {' | '.join(self.notes[-3:])}")

    def at_t0(self, seconds):
        time.sleep(max(0.0, self.t0 + seconds - time.monotonic()))

    def finish(self):
        try:
            out, err = self.process.communicate(timeout=self.seconds + 30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, err = self.process.communicate()
        except BaseException:           # a signal
            self.process.kill()
            self.process.wait()
            raise
        self.notes += err.splitlines()
        lines = [l for l in out.splitlines() if l.startswith("{")]
        self.summary = json.loads(lines[-1]) if lines else None
        self.audio = np.fromfile(self.take_path, dtype="<f4").reshape(-1, 2) if os.path.exists(self.take_path) else None
        return self


# Parts ------------------------------------------------------------------------------------------

def onsets(server, kind, bells, period):
    """Onset errors (frames) of the notes that count, and how many were left out and why."""
    schedule = os.path.join(WORK, f"onsets-{period}.txt")
    events = onset_schedule(period)
    write_schedule(schedule, events)
    synth = Synth(kind, server, bells)
    try:
        probe = Probe(server, kind, schedule, (events[-1][0] + 4800) / RATE, f"onsets-{kind}-{period}").finish()
    finally:
        synth.stop()
    s = probe.summary
    if s is None or probe.audio is None:
        raise RuntimeError(f"the probe failed (exit {probe.process.returncode}): {' | '.join(probe.notes[-3:])}")
    x = probe.audio[:, 0]
    jumps = [at for at, _, _ in s["jumps"]]
    errors, offsets, left_out = [], [], {"late": 0, "jump": 0, "not silent": 0, "not found": 0}
    for sent, cycle, offset in s["events"]:
        if cycle + offset != sent:
            left_out["late"] += 1
            continue
        # A note may sound from its cycle's first frame (up to period - 1 early) on.
        start, end = sent - period - 8, sent + 2 * period
        if any(start - period <= at < end for at in jumps):
            left_out["jump"] += 1
            continue
        loud = np.nonzero(x[start:end] != 0)[0]
        if not len(loud):
            left_out["not found"] += 1
        elif loud[0] < 8:           # sound before the note's cycle: the last note's
            left_out["not silent"] += 1
        else:
            errors.append(int(start + loud[0] - sent))
            offsets.append(offset)
    return errors, offsets, left_out, s, synth.command, probe.command


def voices_cpu(server, kind, bells):
    """CPU of the synth and jackd while 64 bells sound."""
    schedule = os.path.join(WORK, "voices.txt")
    seconds = WARM_SECONDS + CPU_SECONDS + 1
    write_schedule(schedule, voices_schedule(seconds))
    synth, probe = Synth(kind, server, bells), None
    try:
        probe = Probe(server, kind, schedule, seconds, f"voices-{kind}")
        probe.at_t0(WARM_SECONDS)
        synth.ask_voices()
        window = Window({"synth": synth.process.pid, "jackd": server.process.pid}, server, [probe.process.pid]).start()
        probe.at_t0(WARM_SECONDS + CPU_SECONDS)
        window.stop()
        synth.ask_voices()
        probe.finish()
    finally:
        if probe:
            stop(probe.process)
        closing = synth.stop()
    window.voices = synth.voice_counts
    if closing:
        m = re.search(r"voices: peak (\d+)", closing)
        window.voices = [int(m.group(1))] if m else []
    s = probe.summary or {}
    window.level = float(np.sqrt(np.mean(probe.audio[int(WARM_SECONDS * RATE):] ** 2))) if probe.audio is not None else 0
    window.probe_ok = probe.process.returncode == 0
    window.probe_note = f"probe exit {probe.process.returncode}, {s.get('gaps', '?')} gaps, {s.get('late', '?')} late"
    return window, synth.command, probe.command


def idle_cpu(server, kind, bells):
    """CPU of jackd (and the synth, if any) with nothing sounding."""
    synth = Synth(kind, server, bells, connect_system=True) if kind else None
    try:
        time.sleep(SETTLE_SECONDS)
        pids = {"jackd": server.process.pid}
        if synth:
            pids["synth"] = synth.process.pid
        window = Window(pids, server).start()
        time.sleep(IDLE_SECONDS)
        window.stop()
    finally:
        if synth:
            synth.stop()
    return window, synth.command if synth else None


# Report -----------------------------------------------------------------------------------------

def median(windows, key):
    values = [w.percent.get(key) for w in windows if w.percent.get(key) is not None]
    return statistics.median(values) if values else float("nan")


def context(windows):
    return (f"other processes {statistics.median(w.other for w in windows):.1f} %, steal "
            f"{statistics.median(w.steal for w in windows):.1f} %, xruns {sum(w.xruns for w in windows)}")


def thread_median(windows, index):
    values = [w.threads[index] for w in windows if w.threads]
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description="bellkeys against FluidSynth on one JACK server")
    parser.add_argument("--rounds", type=int, default=1, help="repeat parts b and c, interleaved (medians)")
    parser.add_argument("--skip", default="", help="parts to leave out, e.g. --skip c")
    options = parser.parse_args()
    if not os.access(BELLKEYS, os.X_OK):
        sys.exit(f"jack-peers: no bellkeys at {BELLKEYS} (swift build -c release, or set BELLKEYS)")
    os.makedirs(WORK, exist_ok=True)
    subprocess.run(["gcc", "-O2", "-Wall", "-o", os.path.join(WORK, "probe"), os.path.join(ROOT, "Tests", "JACK", "probe.c"),
                    "-ljack"], check=True)
    steps = write_step_bells(WORK)
    steps_sf2 = soundfont(steps, "steps.sf2")
    bells = os.path.join(ROOT, "Samples", "examples", "plain.json")
    bells_sf2 = soundfont(bells, "bells.sf2")
    fluid_version = subprocess.run(["fluidsynth", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    commands = {}
    server = Server(f"bellkeys-peers-{os.getpid()}", 64)
    started = time.monotonic()
    print(f"== {' '.join(server.command)}: {fluid_version}, bellkeys {BELLKEYS}, {os.cpu_count()} CPUs", flush=True)
    try:
        idle, voices = {None: [], "bellkeys": [], "fluidsynth": []}, {"bellkeys": [], "fluidsynth": []}
        for round_ in range(options.rounds):
            if "c" not in options.skip:
                for kind in (None, "bellkeys", "fluidsynth"):
                    w, command = idle_cpu(server, kind, bells if kind == "bellkeys" else bells_sf2)
                    idle[kind].append(w)
                    commands[f"c {kind or 'jackd alone'}"] = command
                    print(f"   c idle {kind or 'jackd alone'}: {w.cpu_text()}; {w.note()}", flush=True)
            if "b" not in options.skip:
                for kind in ("bellkeys", "fluidsynth"):
                    w, command, probe_command = voices_cpu(server, kind, bells if kind == "bellkeys" else bells_sf2)
                    voices[kind].append(w)
                    commands[f"b {kind}"], commands["b probe"] = command, probe_command
                    print(f"   b 64 voices {kind}: {w.cpu_text()}; voices {w.voices}, output RMS {w.level:.4f}, "
                          f"{w.probe_note}; {w.note()}", flush=True)
        onset = {}
        if "a" not in options.skip:
            for period in (64, 128, 256):
                if period != 64:
                    done = server.run("jack_bufsize", str(period))
                    if done.returncode != 0:
                        raise RuntimeError(f"jack_bufsize {period}: {done.stderr.strip()}")
                    time.sleep(1)
                for kind in ("bellkeys", "fluidsynth"):
                    errors, offsets, left_out, s, command, probe_command = onsets(
                        server, kind, steps if kind == "bellkeys" else steps_sf2, period)
                    onset[kind, period] = (errors, offsets, left_out, s)
                    commands[f"a {kind}"], commands["a probe"] = command, probe_command
                    print(f"   a onsets {kind} at {period}: {len(errors)} notes sent at offsets {min(offsets, default='-')}.."
                          f"{max(offsets, default='-')} ({len(set(offsets))} different), errors {min(errors, default='-')}.."
                          f"{max(errors, default='-')}, left out {left_out}", flush=True)
            server.run("jack_bufsize", "64")
    finally:
        server.stop()
    print(f"   ({time.monotonic() - started:.0f} s)")

    print("\n== results (CPU in % of one core)")
    row = "{:<52} {:>18} {:>18} {:>10}"
    print(row.format("", "bellkeys", "FluidSynth", "FS / bk"))
    if onset:
        print("a. onset error = onset - sent frame, in frames: min..max (spread) [notes]")
        for period in (64, 128, 256):
            cells = []
            for kind in ("bellkeys", "fluidsynth"):
                errors = onset[kind, period][0]
                cells.append(f"{min(errors)}..{max(errors)} ({max(errors) - min(errors)}) [{len(errors)}]" if errors else "none")
            print(row.format(f"   period {period} ({period / RATE * 1000:.2f} ms)", *cells, ""))
        for kind, name in (("bellkeys", "bellkeys"), ("fluidsynth", "FluidSynth")):
            notes = [(e, o) for period in (64, 128, 256) for e, o in zip(*onset[kind, period][:2])]
            exact = sum(1 for e, _ in notes if e == 0)
            landing = sorted({e + o for e, o in notes})
            print(f"   {name}: {exact} of {len(notes)} notes on their frame; first non-zero frame at cycle frame "
                  + (", ".join(map(str, landing)) if len(landing) <= 4 else f"{landing[0]}..{landing[-1]}")
                  + " of the cycle they were sent in")
        left = {k: v[2] for k, v in onset.items() if any(v[2].values())}
        if left:
            print("   notes left out: " + "; ".join(f"{k} at {p}: " + ", ".join(f"{n} {why}" for why, n in v.items() if n)
                                             for (k, p), v in left.items()))
    if voices["bellkeys"]:
        print(f"b. 64 voices sounding, {CPU_SECONDS:.0f} s (median of {options.rounds})")
        b, f = median(voices["bellkeys"], "synth"), median(voices["fluidsynth"], "synth")
        print(row.format("   the synth's process", f"{b:.2f} %", f"{f:.2f} %", f"{f / b:.1f}" if b else "-"))
        b, f = thread_median(voices["bellkeys"], 0), thread_median(voices["fluidsynth"], 0)
        print(row.format("     its JACK process thread", f"{b:.2f} %", f"{f:.2f} %", f"{f / b:.1f}" if b else "-"))
        b, f = median(voices["bellkeys"], "jackd"), median(voices["fluidsynth"], "jackd")
        print(row.format("   jackd meanwhile", f"{b:.2f} %", f"{f:.2f} %", f"{f / b:.2f}" if b else "-"))
        print(row.format("   voices (bellkeys: peak; FluidSynth: voice_count)",
                         "/".join(map(str, voices["bellkeys"][-1].voices)), "/".join(map(str, voices["fluidsynth"][-1].voices)), ""))
        print(f"   meanwhile: bellkeys {context(voices['bellkeys'])}; FluidSynth {context(voices['fluidsynth'])}")
    if idle[None]:
        print(f"c. idle, nothing sounding, {IDLE_SECONDS:.0f} s (median of {options.rounds})")
        alone = median(idle[None], "jackd")
        print(row.format("   jackd alone", f"{alone:.2f} %", f"{alone:.2f} %", ""))
        jb, jf = median(idle["bellkeys"], "jackd"), median(idle["fluidsynth"], "jackd")
        sb, sf = median(idle["bellkeys"], "synth"), median(idle["fluidsynth"], "synth")
        print(row.format("   jackd with the synth", f"{jb:.2f} %", f"{jf:.2f} %", f"{jf / jb:.2f}" if jb else "-"))
        print(row.format("   the synth's process", f"{sb:.2f} %", f"{sf:.2f} %", f"{sf / sb:.2f}" if sb else "-"))
        tb, tf = thread_median(idle["bellkeys"], 0), thread_median(idle["fluidsynth"], 0)
        print(row.format("     its JACK process thread", f"{tb:.2f} %", f"{tf:.2f} %", f"{tf / tb:.2f}" if tb else "-"))
        ab, af = jb + sb - alone, jf + sf - alone
        print(row.format("   added to jackd alone (jackd + synth - alone)", f"{ab:.2f} %", f"{af:.2f} %",
                         f"{af / ab:.2f}" if ab > 0 else "-"))
        print(f"   meanwhile: jackd alone {context(idle[None])}; bellkeys {context(idle['bellkeys'])}; "
              f"FluidSynth {context(idle['fluidsynth'])}")
    print("   onset: the first non-zero output frame after exact silence. FluidSynth's first frame of a voice is 0 "
          "(its amplitude ramp starts at 0), so its voices start one frame before the onset shown.")

    print("\n== commands (JACK_DEFAULT_SERVER, JACK_NO_START_SERVER=1, JACK_NO_AUDIO_RESERVATION=1 for all)")
    print(f"   {' '.join(server.command)}; jack_bufsize 128, 256 for part a")
    for key, command in commands.items():
        if command:
            print(f"   {key}: {' '.join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in command)}")
    print("   FluidSynth's ports get aliases: jack_alias fluidsynth:left fluidsynth:out_1 (right: out_2, midi_00: midi_in)")
    print("   c: each synth's outputs connected with jack_connect PORT system:playback_1 / _2")


if __name__ == "__main__":
    # Both unwind like errors, so every server and client started is stopped (SIGINT too when the
    # shell started this in the background, with SIGINT ignored).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
    main()
