"""Tests/Web/run's groups on the limits: strike and message rates, the per-address limits, the
connection cap, a reconnect storm, a flood of slow requests, the all-addresses lockout.
"""
import json
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from wsclient import Closed, http_get
from run_harness import FLOOD_REASON, R, collect, expect_close, frame, quiet_room, strike, wait_room


def group_rate(b):
    # Strikes paced under the connection's message limit (50/s, burst 100): 80 at once, then 10
    # every 0.25 s, 200 in all; the device's strike limit (10/s, burst 20) refuses the rest.
    c = b.ws()
    c.join(b.code, "Fast")
    sent = 0
    started = time.monotonic()
    batch = b"".join(frame(json.dumps(strike(60)).encode()) for _ in range(80))
    c.sock.sendall(batch)
    sent += 80
    while sent < 200:
        time.sleep(0.25)
        c.sock.sendall(b"".join(frame(json.dumps(strike(60)).encode()) for _ in range(10)))
        sent += 10
    send_span = time.monotonic() - started
    rangs, last_rang, closed = 0, started, None
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            m = c.recv(timeout=1.0)
        except (socket.timeout, TimeoutError):
            break
        except Closed:
            closed = c.close_code
            break
        if m.get("type") == "rang":
            rangs += 1
            last_rang = time.monotonic()
    elapsed = last_rang - started
    b.expect["rang"] += rangs
    b.expect["over_low"] += sent - rangs
    b.expect["over_high"] += sent - rangs
    R.check("rate strike limit", closed is None and 20 <= rangs <= 20 + 10 * elapsed + 1,
            f"{sent} strikes sent over {send_span:.2f} s, {rangs} rang (bound 20..{20 + 10 * elapsed + 1:.1f} for "
            f"{elapsed:.2f} s to the last), {sent - rangs} over the limit, closed {closed}")
    c.close()

    # 200 strikes at once: past the burst of 100 messages the connection is closed for flooding.
    c = b.ws()
    c.join(b.code, "Flood")
    started = time.monotonic()
    try:
        c.sock.sendall(b"".join(frame(json.dumps(strike(62)).encode()) for _ in range(200)))
    except OSError:
        pass
    code, reason, msgs = expect_close(c, timeout=5)
    elapsed = time.monotonic() - started
    rang = sum(1 for m in msgs if m.get("type") == "rang")
    accepted_max = int(20 + 10 * elapsed + 1)
    b.expect["flooding"] += 1
    b.expect["rang"] += rang
    b.expect["strikes_extra"] += accepted_max - rang      # accepted, their rang perhaps not sent (the device left)
    b.expect["over_low"] += max(0, 99 - accepted_max)      # the join is one of the 100 messages
    b.expect["over_high"] += 200 - rang
    R.check("rate 200 strikes at once", code == 1008 and reason == FLOOD_REASON and rang <= accepted_max,
            f"close {code} {reason!r} after {elapsed:.2f} s, {rang} rang before it (at most {accepted_max})")
    c.close()

    # 300 pings at once.
    c = b.ws()
    started = time.monotonic()
    try:
        c.sock.sendall(b"".join(frame(json.dumps({"type": "ping", "sent": k}).encode()) for k in range(300)))
    except OSError:
        pass
    code, reason, msgs = expect_close(c, timeout=5)
    elapsed = time.monotonic() - started
    pongs = [m["sent"] for m in msgs if m.get("type") == "pong"]
    b.expect["flooding"] += 1
    R.check("rate 300 pings at once", code == 1008 and reason == FLOOD_REASON and 100 <= len(pongs) <= 100 + 50 * elapsed + 1
            and pongs == list(range(len(pongs))),
            f"{len(pongs)} pongs (bound 100..{100 + 50 * elapsed + 1:.0f} in {elapsed:.2f} s), in order: "
            f"{pongs == list(range(len(pongs)))}, close {code} {reason!r}")
    c.close()
    # 50 a second for 2.2 s is within the limit.
    c = b.ws()
    c.join(b.code, "Steady")
    pongs = 0
    started = time.monotonic()
    for k in range(110):
        c.send({"type": "ping", "sent": k})
        time.sleep(max(0.0, started + (k + 1) * 0.022 - time.monotonic()))
    msgs, closed = collect(c, 3, quiet=0.5)
    pongs = sum(1 for m in msgs if m.get("type") == "pong")
    R.check("rate 45 pings a second", pongs == 110 and closed is None,
            f"110 pings over {time.monotonic() - started:.2f} s: {pongs} pongs, closed {closed}")
    b.close_clients()


def closed_at_once(port, source, count, pause):
    """Opens `count` connections to 127.0.0.1:`port` from `source`, `pause` s apart, and tells for
    each whether the server closed it at once (within 0.3 s, nothing sent); then closes them."""
    socks, closed = [], []
    for _ in range(count):
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(source, 0)))
        time.sleep(pause)
    for s in socks:
        s.settimeout(0.3)
        try:
            closed.append(s.recv(1) == b"")
        except (socket.timeout, TimeoutError):
            closed.append(False)
        except OSError:
            closed.append(True)
    for s in socks:
        s.close()
    return closed


def group_peraddress(b):
    """One address may not take the room's places: 8 connections at once from 127.0.0.5 are
    kept, the 9th and 10th closed at once; 4 devices from 127.0.0.6 join, the 5th is refused."""
    closed = closed_at_once(b.port, "127.0.0.5", 10, pause=0.03)
    b.expect["refused_low"] += 2
    b.expect["refused_high"] += 2
    R.check("per address connections", closed == [False] * 8 + [True] * 2,
            f"10 connections from 127.0.0.5: {closed.count(False)} kept, {closed.count(True)} closed at once (want 8 and 2, the last two)")
    outcomes = []
    for k in range(5):
        c = b.ws(source="127.0.0.6")
        c.send({"type": "join", "code": b.code, "name": f"Twin {k}"})
        m = c.recv(timeout=2)
        while m.get("type") == "lit":
            m = c.recv(timeout=2)
        outcomes.append(m.get("type") if m.get("type") != "refused" else m.get("why"))
    R.check("per address devices", outcomes == ["welcome"] * 4 + ["full"], f"5 joins from 127.0.0.6: {outcomes}")
    b.close_clients()


def group_cap(b):
    """The connection cap (96 with 64 devices): 120 idle sockets from this machine (not held to
    the per-address limit) take every place but the teacher's; each one past that makes the
    oldest idle socket give way (closed at once), and a pupil still joins at its first attempt
    while the idle sockets hold every place."""
    # The teacher's page counts the connections: start from it alone.
    t, room = None, None
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        t = b.ws("/teacher/ws")
        room = t.recv_type("room", timeout=2)
        if room["connections"] == 1:
            break
        t.close()
        time.sleep(0.2)
    maximum = room["maximumConnections"]
    R.check("cap alone", room["connections"] == 1 and maximum == 96,
            f"connections {room['connections']} (the teacher), maximum {maximum}")
    refused_before, gave_way_before = room["connectionsRefused"], room["connectionsGaveWay"]

    def closed_now(socks):
        closed = []
        for s in socks:
            r, _, _ = select.select([s], [], [], 0)
            if r:
                s.settimeout(0.5)
                try:
                    data = s.recv(1)
                except (ConnectionResetError, socket.timeout):
                    data = b""
                if data == b"":
                    closed.append(s)
        return closed
    socks = []
    try:
        started = time.monotonic()
        for _ in range(120):
            s = socket.create_connection(("127.0.0.1", b.port), timeout=3)
            socks.append(s)
        opened = time.monotonic() - started
        time.sleep(0.5)
        closed = closed_now(socks)
        kept = maximum - 1
        R.check("cap 120 idle sockets", len(closed) == 120 - kept and all(s in socks[:120 - kept] for s in closed),
                f"opened in {opened:.2f} s; {120 - len(closed)} kept open, {len(closed)} closed "
                f"(want {kept} kept: {maximum} less the teacher), the closed ones the oldest, each giving way to a "
                f"newer one: {all(s in socks[:120 - kept] for s in closed)}")
        more = []
        for _ in range(5):
            s = socket.create_connection(("127.0.0.1", b.port), timeout=3)
            more.append(s)
            time.sleep(0.05)
        time.sleep(0.3)
        alive = [s for s in socks if s not in closed]
        gone = closed_now(alive)
        more_closed = closed_now(more)
        R.check("cap further connections", not more_closed and gone == alive[:5],
                f"5 more: {5 - len(more_closed)} kept; {len(gone)} of the idle ones closed for them, the oldest "
                f"{gone == alive[:5]}")
        socks += more
        room, last = wait_room(t, lambda m: m["connectionsGaveWay"] == gave_way_before + 120 - kept + 5
                               and m["connections"] == maximum)
        R.check("cap teacher counts", room is not None and room["connectionsRefused"] == refused_before,
                f"connections {(room or last)['connections']}, gave way {(room or last)['connectionsGaveWay'] - gave_way_before} "
                f"more (want {120 - kept + 5}), refused {(room or last)['connectionsRefused'] - refused_before} more (want 0)")
        # A pupil while the idle sockets hold every place: its connection takes the oldest's.
        attempts, w, error = 0, None, None
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and w is None:
            attempts += 1
            try:
                c = b.ws()
                w = c.join(b.code, "After")
            except (Closed, OSError, TimeoutError) as e:
                error = e
                time.sleep(0.1)
        R.check("cap join while full", w is not None and w.get("name") == "After" and attempts == 1,
                f"joined as {w and w.get('name')!r} at attempt {attempts}{'' if w else f' ({error})'}")
    finally:
        for s in socks:
            s.close()
    b.close_clients()


def group_storm(b):
    port = b.port
    host = f"Host: 127.0.0.1:{port}\r\n"
    kinds = [b"", b"GET / HT", f"GET / HTTP/1.1\r\n{host}".encode(), f"GET / HTTP/1.1\r\n{host}\r\n".encode(),
             (f"GET /ws HTTP/1.1\r\n{host}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
              f"dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: http://127.0.0.1:{port}\r\n\r\n").encode()
             + frame(b'{"type":"join","code":"' + b.code.encode() + b'","name":"Storm"}')[:9]]
    socks, failed = [], 0
    started = time.monotonic()
    try:
        for k in range(300):
            if time.monotonic() - started > 3:
                break
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
            except OSError:
                failed += 1
                continue
            socks.append(s)
            data = kinds[k % len(kinds)]
            if data:
                try:
                    s.sendall(data)
                except OSError:
                    pass
            if k % 7 == 0:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # closed with a reset
    finally:
        for s in socks:
            s.close()
    took = time.monotonic() - started
    b.expect["refused_high"] += len(socks)
    R.check("storm 300 connections", len(socks) == 300 and took <= 3,
            f"{len(socks)} opened and closed in {took:.2f} s ({failed} failed to connect)")
    status, _, _ = http_get(port, "/")
    c = b.ws()
    w = c.join(b.code, "Calm")
    sent = time.monotonic()
    c.send(strike(67))
    rang = c.recv_type("rang", timeout=2)
    after = time.monotonic() - sent
    b.expect["rang"] += 1
    R.check("storm afterwards", status == 200 and w.get("name") == "Calm" and rang.get("note") == 67 and after < 1 and b.alive(),
            f"GET / {status}, joined as {w.get('name')!r}, rang {rang.get('note')} in {after * 1000:.0f} ms, running {b.alive()}")
    b.close_clients()


def group_lockout(b):
    """30 wrong codes from 6 addresses lock every join for the rest of the minute."""
    whys = []
    for a in range(6):
        for k in range(5):
            c = b.ws(source=f"127.0.0.{10 + a}")
            c.send({"type": "join", "code": b.wrong_code, "name": f"G{a}{k}"})
            code, reason, msgs = expect_close(c)
            whys.append((code, tuple(m.get("why") for m in msgs if m.get("type") == "refused")))
            b.expect["wrong"] += 1
            c.close()
    R.check("lockout 30 wrong codes", whys == [(1008, ("code",))] * 30,
            f"{sum(1 for w in whys if w == (1008, ('code',)))} of 30 refused as wrong code with 1008")
    results = []
    for source in ["127.0.0.16", "127.0.0.1"]:
        c = b.ws(source=source)
        c.send({"type": "join", "code": b.code, "name": "Late"})
        code, reason, msgs = expect_close(c)
        results.append((source, code, [m.get("why") for m in msgs if m.get("type") == "refused"]))
        c.close()
    R.check("lockout everyone", all(code == 1008 and why == ["locked"] for _, code, why in results),
            f"right code from {[f'{s}: {w}/{code}' for s, code, w in results]}")
    t = b.ws("/teacher/ws")
    room = t.recv_type("room", timeout=2)
    counters = room["counters"]
    R.check("lockout teacher counts", counters["wrongCodes"] == b.expect["wrong"] and counters["lockedOut"] == 2,
            f"wrongCodes {counters['wrongCodes']}, lockedOut {counters['lockedOut']}")
    b.close_clients()


FLOOD_FIRST, FLOOD_ADDRESSES, FLOOD_PER = 2, 30, 8      # 127.0.0.2..127.0.0.31, 8 connections each
RINGER, NEWCOMER = "127.0.0.40", "127.0.0.41"


def group_flood(b):
    """Slots under a flood: 30 addresses keep 8 connections each that send a request head one
    line a second and never finish it, opened again as soon as they are closed: 240 for the 96
    places. Every connection comes from 127.0.0.x (x > 1) to 127.0.0.1, so bellkeys sees a peer
    that is not the address it reached: the per-address limits hold (checked first), and none is
    taken for the teacher. A pupil joined before the flood keeps ringing (4 strikes a second)
    with none lost, and a new pupil from another address joins at its first attempt."""
    t = b.ws("/teacher/ws")
    room = t.recv_type("room", timeout=3)
    maximum, refused_before = room["maximumConnections"], room["connectionsRefused"]

    # The flood's addresses are held to the per-address limit: a 9th connection from the last
    # of them is closed at once (the exception for this machine's own address does not apply).
    last = f"127.0.0.{FLOOD_FIRST + FLOOD_ADDRESSES - 1}"
    closed = closed_at_once(b.port, last, 9, pause=0.02)
    R.check("flood per address", closed == [False] * 8 + [True],
            f"9 connections from {last} to 127.0.0.1: {closed.count(False)} kept, the 9th closed at once: {closed[-1]}")

    ringer = b.ws(source=RINGER)
    ringer.join(b.code, "Ringer")
    ringing = dict(sent=0, rang=0, closed=None)
    stop = threading.Event()

    def ring():
        next_at = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            if now >= next_at:
                ringer.send(strike(60 + ringing["sent"] % 13, 90))
                ringing["sent"] += 1
                next_at += 0.25
            try:
                if ringer.recv(timeout=max(0.01, next_at - time.monotonic())).get("type") == "rang":
                    ringing["rang"] += 1
            except (socket.timeout, TimeoutError):
                pass
            except (Closed, OSError):
                ringing["closed"] = ringer.close_code or "socket"
                return
    ringer_thread = threading.Thread(target=ring, daemon=True)
    ringer_thread.start()

    flooder = subprocess.Popen([sys.executable, str(Path(__file__).resolve().parent / "flood.py"), str(b.port), "30",
                                str(FLOOD_ADDRESSES), str(FLOOD_PER), str(FLOOD_FIRST)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    stats, full, last_room, during, attempts, joined, took, errors = {}, None, None, None, 0, None, None, []
    newcomer_rang = None
    try:
        flooder.stdout.readline()           # "ready": every connection opened once
        full, last_room = wait_room(t, lambda m: m["connections"] == maximum, timeout=5)
        started = time.monotonic()
        while joined is None and attempts < 20 and time.monotonic() - started < 15:
            attempts += 1
            try:
                c = b.ws(source=NEWCOMER, timeout=3)
                joined = c.join(b.code, "Newcomer")
                took = time.monotonic() - started
                c.send(strike(64))
                newcomer_rang = c.recv_type("rang", timeout=2)
            except (Closed, OSError, TimeoutError) as e:
                errors.append(type(e).__name__)
                time.sleep(0.5)
        # The ringer rings on under the flood, 4 s of it at least.
        time.sleep(max(1.0, started + 4 - time.monotonic()))
        during, _ = wait_room(t, lambda m: True, timeout=1)
    finally:
        stop.set()
        ringer_thread.join(timeout=3)
        flooder.send_signal(signal.SIGTERM)
        try:
            out, _ = flooder.communicate(timeout=10)
            stats = json.loads(out.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, ValueError, IndexError):
            flooder.kill()
            flooder.wait(timeout=5)
    # The answers to the last strikes.
    deadline = time.monotonic() + 2
    while ringing["closed"] is None and ringing["rang"] < ringing["sent"] and time.monotonic() < deadline:
        try:
            if ringer.recv(timeout=0.2).get("type") == "rang":
                ringing["rang"] += 1
        except (socket.timeout, TimeoutError):
            pass
        except (Closed, OSError):
            ringing["closed"] = ringer.close_code or "socket"
    R.check("flood fills the places", full is not None and stats.get("opened", 0) > FLOOD_ADDRESSES * FLOOD_PER
            and stats.get("closedByServer", 0) > 0,
            f"{FLOOD_ADDRESSES * FLOOD_PER} connections from {FLOOD_ADDRESSES} addresses for {maximum} places: the teacher saw "
            f"{(full or last_room or {}).get('connections')} connections; the flood opened {stats.get('opened')}, bellkeys closed "
            f"{stats.get('closedByServer')} of them, {stats.get('lines')} header lines sent")
    R.check("flood new pupil joins at once", joined is not None and attempts == 1 and newcomer_rang is not None,
            f"a new pupil from {NEWCOMER} joined " + (f"at attempt {attempts}, {took:.2f} s after the first" if joined else
                                                       f"never in {attempts} attempts") +
            (f" (before: {', '.join(errors)})" if errors else "") +
            f"; its strike answered 'rang': {newcomer_rang is not None}")
    R.check("flood joined pupil rings on", ringing["closed"] is None and ringing["sent"] >= 8
            and ringing["rang"] == ringing["sent"],
            f"the pupil joined before the flood struck {ringing['sent']} times (4 a second), {ringing['rang']} answered 'rang'"
            f"{'' if ringing['closed'] is None else ', closed ' + str(ringing['closed'])}")
    b.expect["rang"] += ringing["sent"] + (newcomer_rang is not None)
    # Everything the flood cost in refusals, as the teacher counts them once it is over.
    after = quiet_room(t, quiet=0.6, timeout=4) or during or room
    b.expect["refused_low"] += after["connectionsRefused"] - refused_before
    b.expect["refused_high"] += after["connectionsRefused"] - refused_before
    b.close_clients()
