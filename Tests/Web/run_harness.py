"""What Tests/Web/run's groups share: the report (`ok`/`FAIL` lines), an instance of bellkeys with
its log, the helpers that read sockets and the teacher's room, and the stop line's check.
"""
import os
import pty
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "Tools" / "python"))
from report import Report  # noqa: E402
from wsclient import Client, Closed, classroom_address  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


NOTES = list(range(60, 73))             # the bundled map: C4..C5
NAMES = ["C4", "C#4", "D4", "D#4", "E4", "F4", "F#4", "G4", "G#4", "A4", "A#4", "B4", "C5"]
FLOOD_REASON = "more than 50 messages a second"
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def binary():
    if os.environ.get("BELLKEYS"):
        return Path(os.environ["BELLKEYS"])
    release = ROOT / ".build" / "release" / "bellkeys"
    return release if release.exists() else ROOT / ".build" / "debug" / "bellkeys"


# MARK: Reporting

R = Report()


# MARK: An instance of bellkeys

class Bellkeys:
    """One `bellkeys --web` with its log; `expect` holds what the tests did, for the stop line."""

    def __init__(self, label, folder, extra=(), terminal=False):
        self.label = label
        self.log_path = Path(folder) / f"{label}.log"
        self.extra = list(extra)
        self.terminal = terminal
        self.proc = None
        self.reader = None
        self.port = self.code = self.key = None
        self.clients = []
        self.expect = dict(malformed=0, flooding=0, wrong=0, rang=0, strikes_extra=0, over_low=0, over_high=0,
                           refused_low=0, refused_high=0)
        self.kept = []          # clients left joined until the stop (devices at the end)

    def start(self):
        command = [str(binary()), "--web", "--web-address", "127.0.0.1", "--web-port", "0", "--no-ui",
                   "--driver", "jack", "--jack-connect", "none"] + self.extra
        log = open(self.log_path, "wb")
        if self.terminal:
            master, slave = pty.openpty()
            import fcntl
            import termios
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                                         cwd=ROOT, start_new_session=True)
            os.close(slave)

            def drain():
                # Everything the terminal shows goes to the log, so bellkeys never waits on a full pty.
                try:
                    while True:
                        try:
                            data = os.read(master, 65536)
                        except OSError:
                            break
                        if not data:
                            break
                        log.write(data)
                        log.flush()
                finally:
                    os.close(master)
                    log.close()
            self.reader = threading.Thread(target=drain, daemon=True)
            self.reader.start()
        else:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         cwd=ROOT, start_new_session=True)
            log.close()
        started = time.monotonic()
        while time.monotonic() - started < 10:
            port, code, key = classroom_address(self.text())
            if port and key:
                self.port, self.code, self.key = port, code, key
                return time.monotonic() - started
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{self.label}: no join line in {time.monotonic() - started:.1f} s "
                           f"(exit {self.proc.poll()}); log {self.log_path}")

    def raw(self):
        try:
            return self.log_path.read_bytes()
        except OSError:
            return b""

    def text(self):
        # A carriage return starts the line again (the status line is overwritten by the next one).
        return ANSI.sub(b"", self.raw()).replace(b"\r\n", b"\n").replace(b"\r", b"\n").decode("utf-8", "replace")

    @property
    def join_url(self):
        return f"http://127.0.0.1:{self.port}/"

    @property
    def wrong_code(self):
        return f"{(int(self.code) + 1) % 10000:04d}"

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def ws(self, path="/ws", **kw):
        c = Client(self.port, path=path, **kw)
        self.clients.append(c)
        return c

    def close_clients(self):
        for c in self.clients:
            if c not in self.kept:
                c.close()
        self.clients = [c for c in self.clients if c in self.kept]

    def settle(self):
        """Waits (at most 2 s) until the room holds only the kept clients: a client closed just
        before the stop has then left, and the stop line's devices count is exact."""
        self.close_clients()
        deadline = time.monotonic() + 2
        try:
            teacher = Client(self.port, path="/teacher/ws", timeout=2)
        except (OSError, Closed):
            return
        try:
            while time.monotonic() < deadline:
                room = teacher.recv_type("room", timeout=max(0.05, deadline - time.monotonic()))
                if len(room["devices"]) == len(self.kept):
                    return
                teacher.send({"type": "velocity", "fixed": None})     # asks for a fresh room message
        except (OSError, Closed, TimeoutError, ValueError):
            pass
        finally:
            teacher.close()

    def stop(self):
        """(exit status or None, seconds to exit)."""
        if self.proc is None:
            return None, 0.0
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        if self.alive() and self.port:
            self.settle()
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            status = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
            status = None
        elapsed = time.monotonic() - started
        if self.reader:
            self.reader.join(timeout=2)
        return status, elapsed


# MARK: Helpers

def expect_close(c, timeout=3.0):
    """Reads until the close frame: (close code, reason, messages before it); code None if the
    socket ended without one, "timeout" if nothing closed."""
    messages = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout", "", messages
        try:
            messages.append(c.recv(timeout=left))
        except Closed:
            return c.close_code, getattr(c, "close_reason", ""), messages
        except (socket.timeout, TimeoutError):
            return "timeout", "", messages
        except OSError as e:
            return None, f"socket error {e.errno}", messages


def ended(c, timeout=1.0):
    """Whether the server closed the TCP connection (EOF or reset) within `timeout`."""
    c.sock.settimeout(timeout)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not c.sock.recv(65536):
                return True
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    except (socket.timeout, TimeoutError):
        return False


def collect(c, seconds, quiet=None):
    """Messages for `seconds` (or until `quiet` seconds pass without one): (messages, closed code)."""
    out = []
    deadline = time.monotonic() + seconds
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return out, None
        try:
            out.append(c.recv(timeout=min(left, quiet) if quiet else left))
        except Closed:
            return out, c.close_code
        except (socket.timeout, TimeoutError):
            if quiet:
                return out, None


def wait_room(t, pred, timeout=3.0):
    """The teacher's first room message for which pred holds, or (None, last seen)."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, last
        try:
            m = t.recv_type("room", timeout=left)
        except (TimeoutError, socket.timeout):
            return None, last
        last = m
        if pred(m):
            return m, m


def quiet_room(t, quiet=0.5, timeout=3.0):
    """Reads room messages until none for `quiet` seconds (nothing left to report)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = t.recv_type("room", timeout=quiet)
        except (TimeoutError, socket.timeout):
            return last
    return last


def notes_of(bells):
    return [b["note"] for b in bells]


def room_devices(m):
    return [(d["id"], d["name"]) for d in m["devices"]] if m else None


def raw_request(port, data, source=None, timeout=5.0):
    """(status, head, body) for `data` sent as it is; the answer is read even if the server
    stopped reading (a send that fails is not an error: the answer is what counts)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                    source_address=(source, 0) if source else None)
    received = b""
    try:
        try:
            sock.sendall(data)
        except OSError:
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    if not received:
        return None, "", b""
    head, _, body = received.partition(b"\r\n\r\n")
    try:
        return int(head.split(b" ", 2)[1]), head.decode("latin-1"), body
    except (IndexError, ValueError):
        return None, head.decode("latin-1"), body


def strike(note, velocity=100):
    return {"type": "strike", "note": note, "velocity": velocity}


def frame(payload, opcode=1):
    """A masked client frame (for sending many in one write)."""
    key = os.urandom(4)
    n = len(payload)
    header = bytes([0x80 | opcode]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n))
    return header + key + bytes(x ^ key[i % 4] for i, x in enumerate(payload))


# MARK: The stop line

def check_stop(b):
    kept = list(b.kept)
    status, took = b.stop()
    text = b.text()
    line = re.search(r"^bellkeys: stopped \(SIGTERM\);.*$", text, re.M)
    numbers = {}
    if line:
        m = re.search(r"classroom: strikes (\d+), devices (\d+) at the end, over the strike limit (\d+), wrong codes (\d+), "
                      r"closed malformed (\d+), closed flooding (\d+), connections refused (\d+), lost on the way (\d+)", line.group(0))
        if m:
            numbers = dict(zip(["strikes", "devices", "over", "wrong", "malformed", "flooding", "refused", "lost"], map(int, m.groups())))
    R.check(f"stop {b.label}", status == 0 and took < 5 and bool(numbers),
            f"exit {status} {took:.2f} s after SIGTERM; stop line {'found' if line else 'MISSING'}"
            f"{'' if numbers else ', without the classroom counters'}")
    # Pupils still joined were told bellkeys stopped.
    if kept:
        closes = []
        for c in kept:
            code, reason, _ = expect_close(c, timeout=2)
            closes.append((code, reason))
            c.close()
        R.check(f"stop {b.label} pupils told", all(c == (1001, "bellkeys stopped") for c in closes), f"closes {closes}")
    if not numbers:
        return
    e = b.expect
    got = numbers
    facts = []
    ok = True

    def agree(name, value, low, high=None):
        nonlocal ok
        high = low if high is None else high
        good = low <= value <= high
        ok = ok and good
        facts.append(f"{name} {value}" + ("" if good else f" (want {low}" + ("" if high == low else f"..{high}") + ")"))
    agree("strikes", got["strikes"], e["rang"], e["rang"] + e["strikes_extra"])
    # The devices still joined when bellkeys was stopped (taken before the server closes them).
    agree("devices at the end", got["devices"], len(kept))
    agree("over the strike limit", got["over"], e["over_low"], e["over_high"])
    agree("wrong codes", got["wrong"], e["wrong"])
    agree("closed malformed", got["malformed"], e["malformed"])
    agree("closed flooding", got["flooding"], e["flooding"])
    agree("connections refused", got["refused"], e["refused_low"], e["refused_high"])
    agree("lost on the way", got["lost"], 0)
    R.check(f"stop {b.label} counters", ok, ", ".join(facts))
