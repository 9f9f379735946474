"""What Tests/Web/browser's parts share: the bells' numbers, the report (`ok`/`FAIL` lines),
bounded waits, the processes it starts (each in a session of its own, stopped by its id), the
synthetic map and the recording's reader, the JACK server and bellkeys.
"""
import json
import math
import os
import signal
import subprocess
import sys
import time
import traceback
import wave
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tools" / "python"))
import bells  # noqa: E402
from report import Report  # noqa: E402
from wsclient import classroom_address  # noqa: E402


HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

RATE = 48_000
NOTES = list(range(60, 73))
NAMES = ["C4", "C#4", "D4", "D#4", "E4", "F4", "F#4", "G4", "G#4", "A4", "A#4", "B4", "C5"]
CC7_DEFAULT = (100 / 127) ** 2
HOLD, DECAY, RELEASE = 0.25, 0.05, 0.02
WHOLE_RUN = 180                      # seconds, at most
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WEBKITDRIVER = os.environ.get("WEBKITDRIVER", "/usr/bin/WebKitWebDriver")     # (WEBKITDRIVER=/bin/false: the FAIL path)
MINIBROWSER_CANDIDATES = ["/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                          "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
                          "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.0/MiniBrowser"]
MOBILE_UA = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
             "Chrome/126.0.0.0 Mobile Safari/537.36")


def level_of(note):
    return 4096 + 512 * (note - 60)


# The map's second set, "Five": five bells on C4 D4 E4 F4 G4, louder as they go down, so that
# no strike of it sounds as the first set's bell of the same note.
FIVE = [60, 62, 64, 65, 67]


def five_level_of(note):
    return 12288 - 512 * (note - 60)


def jump(note, velocity, level=level_of):
    """What a strike of `note` at `velocity` adds to each channel as it starts."""
    return level(note) / 32768 * (velocity / 127) ** 2 * CC7_DEFAULT


def js_round(x):
    return math.floor(x + 0.5)


def page_velocity(y, top, height):
    """The velocity the pupil's page computes for a touch at clientY `y` on a bell (PupilPage.swift)."""
    return max(1, min(127, js_round(127 - (y - top) / height * 87)))


def binary():
    if os.environ.get("BELLKEYS"):
        return Path(os.environ["BELLKEYS"])
    found = [p for p in (ROOT / ".build" / "release" / "bellkeys", ROOT / ".build" / "debug" / "bellkeys") if p.exists()]
    return max(found, key=lambda p: p.stat().st_mtime) if found else ROOT / ".build" / "debug" / "bellkeys"


# MARK: Reporting

R = Report()


def until(fn, timeout, interval=0.05):
    """Calls fn until it returns something true, for at most `timeout` s; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = fn()
        except Exception:               # noqa: BLE001 (a stale element, a page mid-redraw)
            value = None
        if value:
            return value
        if time.monotonic() >= deadline:
            return value
        time.sleep(interval)


class Interrupted(BaseException):
    """The whole run's time is up, or a signal came: not an Exception, so that no retry loop
    (until, a browser's own error handling) swallows it on the way out."""


# MARK: Processes (each in a session of its own, stopped by its id)

class Processes:
    def __init__(self):
        self.started = []       # (name, Popen)

    def start(self, name, command, **kw):
        p = subprocess.Popen(command, start_new_session=True, **kw)
        self.started.append((name, p))
        return p

    def adopt(self, name, proc):
        """A process started by someone else for us (a WebDriver service), in a session of its own."""
        if proc is not None:
            self.started.append((name, proc))

    @staticmethod
    def group(pgid):
        """The processes still in process group `pgid` (a group whose leader was started here in a
        session of its own: Linux reuses no id while a group still uses it)."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid and fields[0] != "Z":
                out.append(int(entry))
        return out

    @staticmethod
    def stop(proc, grace=5.0):
        """SIGTERM to the process, SIGKILL after `grace`; then whatever it started that is still
        in its group (a browser's helpers), each by its id."""
        if proc is None:
            return None
        pgid = proc.pid             # started with start_new_session: it leads its own group
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            left = Processes.group(pgid)
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and Processes.group(pgid):
                time.sleep(0.1)
        return proc.returncode

    def stop_all(self):
        for name, p in reversed(self.started):
            try:
                self.stop(p)
            except Exception:           # noqa: BLE001
                traceback.print_exc()
        self.started = []


P = Processes()


# MARK: Files

def write_map(folder):
    """A map of two sets of step bells (see the top): "Steps", C4..C5, and "Five" (FIVE, at
    five_level_of), as Tests/JACK/check.py writes such bells."""
    def bells(prefix, notes, level):
        keys = []
        for note in notes:
            hold, decay = int(HOLD * RATE), int(DECAY * RATE)
            samples = np.concatenate([np.full(hold, level(note)),
                                      np.round(level(note) * (1 - np.arange(1, decay + 1) / decay))]).astype("<i2")
            name = f"{prefix}-{note}.wav"
            with wave.open(str(folder / name), "wb") as w:
                w.setnchannels(1)
                w.setsampwidth(2)
                w.setframerate(RATE)
                w.writeframes(samples.tobytes())
            keys.append({"note": note, "sample": name})
        return keys
    sets = [{"name": "Steps", "program": 0, "noteOff": "damp", "releaseSeconds": RELEASE, "keys": bells("bell", NOTES, level_of)},
            {"name": "Five", "program": 1, "noteOff": "damp", "releaseSeconds": RELEASE, "keys": bells("five", FIVE, five_level_of)}]
    path = folder / "map.json"
    path.write_text(json.dumps({"comment": "synthetic step bells for Tests/Web/browser", "sets": sets}, indent=1))
    return path


def read_float_wav(path):
    """(frames, channels) float32 from a 32-bit float WAV at the test's rate."""
    return bells.read_float_wav(path, RATE)


# MARK: JACK and bellkeys

class Jack:
    def __init__(self, folder):
        self.name = f"bellkeys-browser-{os.getpid()}"
        self.folder = folder
        self.proc = None
        self.env = dict(os.environ, JACK_NO_AUDIO_RESERVATION="1", JACK_NO_START_SERVER="1", JACK_DEFAULT_SERVER=self.name)

    def start(self):
        realtime = subprocess.run(["chrt", "-f", "10", "true"], capture_output=True).returncode == 0
        command = ["jackd", "-S"] + (["-R"] if realtime else []) + ["-n", self.name, "-d", "dummy", "-r", str(RATE), "-p", "64"]
        log = open(self.folder / "jackd.log", "wb")
        self.proc = P.start("jackd", command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env)
        log.close()
        waited = subprocess.run(["timeout", "10", "jack_wait", "-w", "-t", "8"], env=self.env, capture_output=True, text=True)
        if waited.returncode != 0 or self.proc.poll() is not None:
            raise RuntimeError(f"jackd did not start ({' '.join(command)}): {(self.folder / 'jackd.log').read_text()[-500:]}")
        return " ".join(command)

    def stop(self):
        status = Processes.stop(self.proc)
        # A server stopped by SIGTERM removes these itself; one killed leaves them (ours only: our name).
        for f in Path("/dev/shm").glob(f"jack_{self.name}_*"):
            f.unlink(missing_ok=True)
        for f in Path("/dev/shm").glob(f"jack_sem.*_{self.name}_*"):
            f.unlink(missing_ok=True)
        return status


class Bellkeys:
    def __init__(self, folder, map_path, jack):
        self.folder = folder
        self.map_path = map_path
        self.jack = jack
        self.log_path = folder / "bellkeys.log"
        self.recording = folder / "out.wav"
        self.proc = None
        self.port = self.code = self.key = None

    def start(self):
        command = [str(binary()), "--driver", "jack", "--jack-connect", "none", "--no-ui", "--map", str(self.map_path),
                   "--web", "--web-address", "127.0.0.1", "--web-port", "0", "--record", str(self.recording)]
        log = open(self.log_path, "wb")
        self.proc = P.start("bellkeys", command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            env=self.jack.env, cwd=ROOT)
        log.close()
        started = time.monotonic()
        while time.monotonic() - started < 15:
            self.port, self.code, self.key = classroom_address(self.text())
            if self.port:
                return time.monotonic() - started
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"bellkeys: no join line in {time.monotonic() - started:.1f} s (exit {self.proc.poll()}): {self.text()[-800:]}")

    def text(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"

    def stop(self):
        """(exit status, seconds to exit)."""
        if self.proc is None:
            return None, 0.0
        started = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                Processes.stop(self.proc)
                return "hung (killed after 10 s)", time.monotonic() - started
        return self.proc.returncode, time.monotonic() - started
