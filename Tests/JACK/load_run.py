"""One run of Tests/JACK/load: a private jackd, the sender, the twin and bellkeys, and what they
measured (jackd's log stamped as it comes, /proc's CPU figures, the clients' closing lines)."""
import json
import os
import re
import subprocess
import time

from closing import closing_line
from processes import (Server, all_processes, comm_of, cpu_of_others, jack_environment, steal_percent, steal_ticks,
                       stop)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, ".build-jack", "load")
BELLKEYS = os.environ.get("BELLKEYS", os.path.join(ROOT, ".build", "release", "bellkeys"))
MAP = os.path.join(ROOT, "Samples", "tags.json")
RATE, PERIOD, POLYPHONY, EVENTS_PER_SECOND = 48_000, 64, 128, 2000
TWIN_VOICES = 128               # load_twin starts with this many voices a cycle (see load_send.c)
AUDIO_SERVERS = ("jackd", "jackdbus", "pipewire", "pipewire-pulse", "wireplumber", "pulseaudio")


# Processes --------------------------------------------------------------------------------------

def foreign_audio(ours):
    """Audio servers and JACK clients running that are not this test's: 'comm(pid)'."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in ours:
            try:
                comm = open(f"/proc/{entry}/comm").read().strip()
            except OSError:
                continue
            if comm in AUDIO_SERVERS or comm in ("bellkeys", "probe", "fluidsynth", "load_send"):
                found.add(f"{comm}({entry})")
    return found


def wait_for_port(env, port, process, seconds=10):
    """Waits until `port` exists (its client is open), or raises."""
    give_up = time.monotonic() + seconds
    while port not in subprocess.run(["jack_lsp"], env=env, capture_output=True, text=True, timeout=10).stdout.split("\n"):
        if process.poll() is not None or time.monotonic() > give_up:
            raise RuntimeError(f"no port {port} after {seconds} s" + (f" (exit {process.returncode})" if process.poll() is not None else ""))
        time.sleep(0.1)


# One run ----------------------------------------------------------------------------------------

XRUN_CLIENT = re.compile(r"JackEngine::XRun: client = (\S+) was not finished, state = (\w+)")
XRUN_LATE_CLIENT = re.compile(r"JackEngine::XRun: client (\S+) finished after current callback")

class Run:
    """What one run measured."""


def xruns_in(lines, start, end):
    """What jackd logged in [start, end): driver xruns, and each unfinished cycle with the clients
    it named (jackd names them before its "Process error" line; a cycle after the first of a run
    of unfinished ones names none)."""
    counts = {"driver": 0, "graph": 0, "clients": {}, "seconds": set(), "cycles": [], "times": []}
    named = set()
    for at, text in lines:
        if not start <= at < end:
            continue
        if "JackTimedDriver::Process XRun" in text:
            counts["driver"] += 1
        elif "ProcessGraphAsyncMaster: Process error" in text:
            counts["graph"] += 1
            counts["cycles"].append(frozenset(named))
            counts["times"].append(at)
            named = set()
        else:
            m = XRUN_CLIENT.search(text) or XRUN_LATE_CLIENT.search(text)
            if not m:
                continue
            key = (m.group(1), m.group(2) if m.re is XRUN_CLIENT else "Finished late")
            counts["clients"][key] = counts["clients"].get(key, 0) + 1
            named.add(key)
        counts["seconds"].add(int(at - start))
    return counts


def perform(kind, seconds, realtime, sender, twin_ns=None):
    """One run: "calibrate" (the sender into bellkeys alone), "control" (the sender into load_twin)
    or "bellkeys" (the sender into bellkeys and load_twin side by side); the twin's callback takes
    `twin_ns` on average if given."""
    run = Run()
    run.kind, run.seconds = kind, seconds
    name = f"bellkeys-load-{os.getpid()}"
    server = bellkeys = twin = send = None
    ours = {os.getpid()}
    run.foreign = foreign_audio(ours)
    try:
        server = Server(name, ["-R"] if realtime else ["-r"], RATE, PERIOD, os.path.join(WORK, f"jackd-{kind}.log"))
        run.jackd_command = " ".join(server.command)
        ours.add(server.process.pid)
        env = jack_environment(name)
        targets = []
        run.twin_command = [sender, "--twin", str(TWIN_VOICES)] + (["--busy-ns", str(round(twin_ns))] if twin_ns else [])

        # The twin first: JACK2 wakes a sender's receivers in the order they opened, so bellkeys
        # is woken second, never favoured.
        if kind != "calibrate":
            with open(os.path.join(WORK, f"load_twin-{kind}.log"), "w") as log:
                twin = subprocess.Popen(run.twin_command, stdin=subprocess.DEVNULL, stdout=log,
                                        stderr=subprocess.STDOUT, env=env)
            ours.add(twin.pid)
            wait_for_port(env, "load_twin:midi_in", twin)
            targets.append("load_twin:midi_in")
        if kind != "control":
            run.bellkeys_command = [BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", MAP,
                                    "--polyphony", str(POLYPHONY)]
            with open(os.path.join(WORK, f"bellkeys-{kind}.log"), "w") as log:
                bellkeys = subprocess.Popen(run.bellkeys_command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, env=env)
            ours.add(bellkeys.pid)
            wait_for_port(env, "bellkeys:midi_in", bellkeys)
            targets.insert(0, "bellkeys:midi_in")
        run.sender_command = [sender, "--seconds", str(seconds), "--rate", str(EVENTS_PER_SECOND)]
        for target in targets:
            run.sender_command += ["--target", target]
        send = subprocess.Popen(run.sender_command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        ours.add(send.pid)
        notes = []
        for line in send.stderr:
            notes.append(line.rstrip())
            if line.startswith("load_send: sending"):
                break
        run.start = time.monotonic()
        all_start, steal_start = all_processes(), steal_ticks()
        # Look for other audio servers now and then while the sender sends.
        deadline = run.start + seconds + 40
        while send.poll() is None and time.monotonic() < deadline:
            run.foreign |= foreign_audio(ours)
            try:
                send.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        run.end = time.monotonic()
        all_end, steal_end = all_processes(), steal_ticks()
        window = run.end - run.start
        run.cpu = {}
        for label, p in (("jackd", server.process), ("bellkeys", bellkeys), ("load_send", send), ("load_twin", twin)):
            if p and all_end.get(p.pid) is not None and p.pid in all_start:
                run.cpu[label] = (all_end[p.pid] - all_start[p.pid]) / window * 100
        # Everything else (alive at both ends), and what the hypervisor took.
        others = cpu_of_others(all_start, all_end, ours)
        run.other = sum(others.values()) / window * 100
        top = sorted(others, key=others.get, reverse=True)[:2]
        run.top_other = ", ".join(f"{comm_of(p)} {others[p] / window * 100:.1f} %" for p in top if others[p] > 0.01 * window)
        run.steal = steal_percent(steal_start, steal_end)
        if send.poll() is None:
            stop(send)
        out, err = send.communicate(timeout=10)
        run.sender_status = send.returncode
        run.sender_notes = notes + err.splitlines()
        lines = [l for l in out.splitlines() if l.startswith("{")]
        run.sent = json.loads(lines[-1]) if lines else None
        if bellkeys:
            run.bellkeys_running = bellkeys.poll() is None
            stopped = time.monotonic()
            status, killed = stop(bellkeys)
            run.bellkeys_status = "hung (killed after 5 s)" if killed else status
            run.stop_ms = (time.monotonic() - stopped) * 1000
            run.bellkeys_log = open(os.path.join(WORK, f"bellkeys-{kind}.log")).read()
            run.closing, run.bellkeys = closing_line(run.bellkeys_log)
            run.realtime_client = "real-time (SCHED_FIFO" in run.bellkeys_log
        run.twin = None
        if twin:
            stop(twin)
            lines = [l for l in open(os.path.join(WORK, f"load_twin-{kind}.log")).read().splitlines() if l.startswith("{")]
            run.twin = json.loads(lines[-1]) if lines else None
    finally:
        for p in (send, bellkeys, twin):
            stop(p)
        if server:
            server.stop()
    # The window: from the first event to the sender's end (it ends ≤ 0.1 s after its last event).
    run.xruns = xruns_in(server.lines, run.start, run.end)
    run.xruns_outside = xruns_in(server.lines, 0, run.start)
    after = xruns_in(server.lines, run.end, float("inf"))
    run.xruns_outside["driver"] += after["driver"]
    run.jackd_realtime = any("starting in realtime mode" in t for _, t in server.lines)
    return run
