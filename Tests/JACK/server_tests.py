"""The tests ports, server-gone and pipewire-gone: ports and connections, another rate, and a
server that goes away."""
import os
import re
import signal
import subprocess
import time

import numpy as np

from bells import step_bell
from common import BELLKEYS, PIPEWIRE_PID, PROBE, RATE, WORK, WRAP, bellkeys_lines, check, folder_for, frame
from files import write_map
from servers import connections, forget_server, jack_lsp, start_bellkeys, start_server, stop_bellkeys, stop_server
from analysis import jump, onsets_ok, unchecked
from takes import compare_take, bellkeys_skipped, perform, probe_ok, record_ok, render, stopped_ok


def test_ports():
    """Ports and connections as `jack_lsp -c` shows them: out_1, out_2 to the physical playback
    ports by default, midi_in; --jack-connect CLIENT; the latency JACK propagates to them; a
    server at another rate (the bells resampled at load)."""
    folder = folder_for("ports")
    map_path = write_map(folder, {60: step_bell(8192, frame(0.2), frame(0.1))})
    bellkeys, _ = start_bellkeys(folder, ["--map", map_path])
    try:
        for _ in range(100):
            table = connections(jack_lsp("-c"))
            if len(table.get("bellkeys:out_2", [])) or bellkeys.poll() is not None:
                break
            time.sleep(0.05)
        latency = jack_lsp("-l", "bellkeys:out_1")
        downstream = jack_lsp("-l", (table.get("bellkeys:out_1") or ["?"])[0])
    finally:
        status = stop_bellkeys(bellkeys)
    first, second = (sorted(p for p in table if p.startswith(("system:playback", "test-sink:playback")))+ ["?", "?"])[:2]
    check(table.get("bellkeys:out_1") == [first] and table.get("bellkeys:out_2") == [second]
          and "bellkeys:midi_in" in table and status == 0,
          f"ports: bellkeys:out_1 → {table.get('bellkeys:out_1')}, out_2 → {table.get('bellkeys:out_2')}, "
          f"midi_in {'there' if 'bellkeys:midi_in' in table else 'missing'} (the physical playback ports: {first}, {second})")
    ranges = re.findall(r"playback latency = \[ (\d+) (\d+) \]", latency)
    theirs = re.findall(r"playback latency = \[ (\d+) (\d+) \]", downstream)
    check(bool(ranges) and ranges == theirs,
          f"ports: bellkeys:out_1 publishes the playback latency of the port it feeds (bellkeys adds none): "
          f"{ranges[0] if ranges else latency.strip()} frames, the same as {(table.get('bellkeys:out_1') or ['?'])[0]}'s")

    probe_client = subprocess.Popen([*WRAP, PROBE, "--target", "nobody", "--schedule", "/dev/null", "--seconds", "1",
                                     "--out", os.path.join(folder, "unused.f32"), "--channels", "2", "--wait", "3"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if "probe_rec:in_1" in jack_lsp():
                break
            time.sleep(0.05)
        bellkeys, _ = start_bellkeys(folder, ["--map", map_path, "--jack-connect", "probe_rec"])
        for _ in range(100):
            table = connections(jack_lsp("-c"))
            if len(table.get("bellkeys:out_2", [])) or bellkeys.poll() is not None:
                break
            time.sleep(0.05)
        stop_bellkeys(bellkeys)
    finally:
        probe_client.kill()
        probe_client.wait()
    check(table.get("bellkeys:out_1") == ["probe_rec:in_1"] and table.get("bellkeys:out_2") == ["probe_rec:in_2"],
          f"ports: --jack-connect probe_rec connects out_1 → {table.get('bellkeys:out_1')}, out_2 → {table.get('bellkeys:out_2')}")
    if PIPEWIRE_PID:
        return
    name = f"{os.environ['JACK_DEFAULT_SERVER']}-44k"
    server = start_server(name, folder, "jackd-44k.log", rate=44_100)
    try:
        env = dict(os.environ, JACK_DEFAULT_SERVER=name)
        bellkeys, log_path = start_bellkeys(folder, ["--map", map_path, "--jack-connect", "none"], env=env)
        status = stop_bellkeys(bellkeys)
    finally:
        stop_server(server)
    said = open(log_path).read()
    check("44100 Hz" in said and status == 0,
          f"ports: on a 44.1 kHz server the bells are resampled at load: {next((l.strip() for l in said.splitlines() if 'Hz' in l), said.strip())}")


def test_server_gone():
    folder = folder_for("server-gone")
    map_path = write_map(folder, {60: step_bell(8192, frame(1.0), frame(2.0))})
    saved = os.environ["JACK_DEFAULT_SERVER"]
    # One name for every run: the next run reclaims the registry slot of a server this one
    # could not clean up after killing it.
    name = "bellkeys-test-gone"
    server, gone = None, {}

    def kill_server(bellkeys):
        server.kill()
        killed = time.monotonic()
        try:
            bellkeys.wait(timeout=3)
        except subprocess.TimeoutExpired:
            pass
        gone["ms"] = (time.monotonic() - killed) * 1000

    try:
        server = start_server(name, folder)
        os.environ["JACK_DEFAULT_SERVER"] = name
        take = perform(folder, map_path, [(0, 0x90, 60, 100)], 3.0, actions=[(0.5, kill_server)])
    finally:
        os.environ["JACK_DEFAULT_SERVER"] = saved
        if server:
            server.kill()
            server.wait()
            forget_server(name, folder)
        if os.path.exists(os.path.join(WORK, "extra-jackd.pid")):
            os.remove(os.path.join(WORK, "extra-jackd.pid"))
    s = take.summary or {}
    sounding = take.audio is not None and float(np.abs(take.audio[:frame(0.4)]).max()) > 0
    check(take.status == 3 and s.get("server_gone") and sounding,
          f"server-gone: the probe heard the bell ({'sounding' if sounding else 'silent'}), then stopped with exit {take.status} "
          f"when the server was killed ({s.get('server_reason', '?')!r} after {s.get('recorded', 0) / RATE:.2f} s recorded)")
    ms = gone.get("ms", float("inf"))
    check(not take.bellkeys_running and take.bellkeys_status not in (0, None) and ms <= 1000 and "JACK" in take.log,
          f"server-gone: bellkeys exited with status {take.bellkeys_status} {ms:.0f} ms after the server was killed"
          f"{' (still running: stopped by SIGTERM)' if take.bellkeys_running else ''}; it said: {bellkeys_lines(take.log)}")

    # No server at all: a name no server has.
    env = dict(os.environ, JACK_DEFAULT_SERVER=f"{saved}-none")
    started = time.monotonic()
    try:
        done = subprocess.run([BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", map_path, "--jack-connect", "none"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10, env=env)
        status, said = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        status, said = "still running after 10 s", (e.stdout or b"").decode() + (e.stderr or b"").decode()
    ms = (time.monotonic() - started) * 1000
    check(status not in (0, "still running after 10 s") and ms <= 2000 and "JACK" in said,
          f"server-gone: with no server bellkeys exits with status {status} in {ms:.0f} ms; it said: {bellkeys_lines(said)}")


def test_pipewire_gone():
    """PipeWire killed mid-note (the last test of a PipeWire run: the server does not come back)."""
    folder = folder_for("pipewire-gone")
    map_path = write_map(folder, {60: step_bell(8192, frame(3), frame(0.1))})
    log = open(os.path.join(folder, "bellkeys.log"), "w")
    bellkeys = subprocess.Popen([*WRAP, BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", "--map", map_path,
                                 "--jack-connect", "none"], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.5)
        running = bellkeys.poll() is None
        started = time.monotonic()
        os.kill(PIPEWIRE_PID, signal.SIGKILL)
        try:
            status = bellkeys.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = "hung"
        ms = (time.monotonic() - started) * 1000
    finally:
        if bellkeys.poll() is None:
            bellkeys.kill()
            bellkeys.wait()
        log.close()
    said = open(os.path.join(folder, "bellkeys.log")).read()
    check(running and status == 1 and ms < 1000 and "went away" in said,
          f"pipewire-gone: bellkeys exited with status {status} {ms:.0f} ms after PipeWire was killed; it said: {bellkeys_lines(said)}")


def test_stall():
    """PipeWire stalled twice for 40 ms mid-take (SIGSTOP, SIGCONT), as a busy machine stalls it
    now and then: its driver then skips the cycles it slept through, for every client at once,
    bellkeys included. bellkeys counts them (skipped, in its closing line), goes on where it
    stopped, and plays the notes after the stall at their frames; the take, stretch by stretch
    between the stalls, is its render (compare_take), and its --record, bit for bit, the
    stretches as far apart as bellkeys says it was skipped. PipeWire only: jackd's dummy driver does not
    skip."""
    if not PIPEWIRE_PID:
        check(False, "stall: a PipeWire test (Tests/JACK/run --pipewire stall): jackd's dummy driver does not skip")
        return
    folder = folder_for("stall")
    map_path = write_map(folder, {n: step_bell(8192, frame(0.4), frame(0.2)) for n in range(60, 73)})
    events = [(frame(0.1 * k, (k * 23) % 512), 0x90, 60 + (k * 5) % 13, 40 + (k * 17) % 80) for k in range(1, 28)]
    recording = os.path.join(folder, "recording.wav")
    if os.path.exists(recording):
        os.remove(recording)

    def stall(bellkeys):
        os.kill(PIPEWIRE_PID, signal.SIGSTOP)
        try:
            time.sleep(0.04)
        finally:
            os.kill(PIPEWIRE_PID, signal.SIGCONT)

    take = perform(folder, map_path, events, 3.0, actions=[(1.03, stall), (2.03, stall)],
                   extra=("--record", recording))
    stopped_ok("stall", take)
    if not probe_ok("stall", take):
        return
    net, said = bellkeys_skipped(take)
    check(take.summary["gaps"] > 0 and said.startswith("skipped ") and not said.startswith("skipped 0 "),
          f"stall: PipeWire skipped the probe in {take.summary['gaps']} stretches ({take.summary['gap_frames']} frames) "
          f"and bellkeys: {said}, {net} frames not played in all")
    notes = [(at, jump(8192, velocity)) for at, _, _, velocity in events if not unchecked(at, margin=500)]
    onsets_ok("stall", take.audio, notes, what=" outside the stalls")
    compare_take("stall", take, events, lambda notes, n: render(folder, map_path, notes, 2, n), what="the take")
    record_ok("stall", take, events, recording)
