"""What the parts of Tests/JACK/check.py share: the settings from the environment, the "ok" or
"FAIL" line and the count of failures, small helpers."""
import os

RATE = 48_000
# The server's period: 64 on jackd; Tests/JACK/run --pipewire sets another (see there).
PERIOD = int(os.environ.get("JACK_TEST_PERIOD", "64"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, ".build-jack")
BELLKEYS = os.environ.get("BELLKEYS", os.path.join(ROOT, ".build", "release", "bellkeys"))
PROBE = os.path.join(WORK, "probe")
# Under PipeWire (Tests/JACK/run --pipewire): every JACK client runs through `pw-jack`, as users
# run bellkeys there, and the server is the private pipewire process PIPEWIRE_PID.
PIPEWIRE_PID = int(os.environ.get("PIPEWIRE_PID", "0"))
WRAP = ["pw-jack"] if PIPEWIRE_PID else []
CC7_DEFAULT = (100 / 127) ** 2
failures = 0


def check(ok, text):
    global failures
    print(("ok    " if ok else "FAIL  ") + text, flush=True)
    if not ok:
        failures += 1


def frame(seconds, offset=0):
    return int(round(seconds * RATE)) + offset


def folder_for(name):
    folder = os.path.join(WORK, name)
    os.makedirs(folder, exist_ok=True)
    return folder


def tail(text, lines=3):
    return " | ".join(l for l in text.strip().splitlines()[-lines:]) or "(nothing)"


def bellkeys_lines(text):
    """bellkeys' error and what follows it, or its last lines; never libjack's."""
    noise = ("Cannot ", "CheckRes", "Could not", "JackSocket", "JackShm", "jack server is not")
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.startswith(noise)]
    errors = [i for i, l in enumerate(lines) if "error" in l]
    return " | ".join(lines[errors[0]:errors[0] + 2] if errors else lines[-2:]) or "(nothing)"
