"""Tests/Web/run's groups on the room: pupils joining and ringing, the protocol's refusals, room
codes, the teacher's page, the follow-along, a device that drops, coming back, a full room.
"""
import json
import os
import re
import socket
import struct
import time

from wsclient import Closed
from run_harness import (NAMES, NOTES, R, collect, ended, expect_close, notes_of, quiet_room, room_devices,
                         strike, wait_room)


def group_pupil(b):
    a = b.ws()
    welcome = a.join(b.code, "Sam")
    bells = welcome.get("bells", [])
    shape_ok = (welcome.get("type") == "welcome" and isinstance(welcome.get("id"), int) and welcome["id"] >= 1
                and welcome.get("name") == "Sam" and notes_of(bells) == NOTES and [x["name"] for x in bells] == NAMES
                and all(re.fullmatch(r"#[0-9a-f]{6}", x["colour"]) and isinstance(x["damps"], bool) for x in bells)
                and bells[0]["colour"] == "#e21c48" and "fixedVelocity" in welcome and welcome["fixedVelocity"] is None)
    R.check("pupil welcome", shape_ok,
            f"id {welcome.get('id')}, name {welcome.get('name')!r}, {len(bells)} bells {notes_of(bells)[:1]}..{notes_of(bells)[-1:]} "
            f"named {bells[0]['name'] if bells else None}..{bells[-1]['name'] if bells else None}, "
            f"colour of C {bells[0]['colour'] if bells else None}, fixedVelocity {welcome.get('fixedVelocity')}")
    after = a.recv(timeout=2)
    R.check("pupil lit after the welcome", after.get("type") == "lit" and isinstance(after.get("notes"), list),
            f"next message {json.dumps(after)[:80]}")
    s2 = b.ws()
    w2 = s2.join(b.code, "Sam")
    R.check("pupil second Sam", w2.get("name") == "Sam 2" and w2.get("id") != welcome.get("id"),
            f"named {w2.get('name')!r}, id {w2.get('id')} (first {welcome.get('id')})")
    uni = b.ws()
    name = "é" * 23 + "🔔"
    wu = uni.join(b.code, name)
    R.check("pupil 24-character name", wu.get("name") == name, f"named {wu.get('name')!r}")
    uni.close()

    a.send({"type": "ping", "sent": 1234.5})
    pong = a.recv_type("pong", timeout=2)
    R.check("pupil ping", pong.get("sent") == 1234.5 and isinstance(pong.get("received"), (int, float))
            and pong.get("received") == pong.get("replied") and pong["received"] > 0,
            f"pong {json.dumps(pong)}")

    sent = time.monotonic()
    a.send(strike(60, 100))
    rang = a.recv_type("rang", timeout=2)
    took = time.monotonic() - sent
    b.expect["rang"] += 1
    R.check("pupil strike rang", rang.get("note") == 60 and isinstance(rang.get("queuedAfter"), (int, float))
            and 0 <= rang["queuedAfter"] < 1000 and took < 1,
            f"{json.dumps(rang)} after {took * 1000:.1f} ms")

    def lit_with(c, want, timeout=3.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = c.recv_type("lit", timeout=deadline - time.monotonic())
            except (TimeoutError, socket.timeout):
                return None
            if want(m["notes"]):
                return m
        return None
    seen_a = lit_with(a, lambda n: 60 in n)
    seen_2 = lit_with(s2, lambda n: 60 in n)
    R.check("pupil lit 60 to everyone", seen_a is not None and seen_2 is not None,
            f"striker saw {seen_a}, the other pupil saw {seen_2}")
    a.send({"type": "release", "note": 60})
    a.send({"type": "damp", "note": 60})
    dark = lit_with(a, lambda n: 60 not in n, timeout=5)
    a.send({"type": "ping", "sent": 1})
    pong = a.recv_type("pong", timeout=2)
    R.check("pupil release and damp", dark is not None and pong.get("sent") == 1,
            f"lit without 60 after the damp: {dark}; still open (pong {pong.get('sent')})")

    a.send({"type": "join", "code": b.code, "name": "Again"})
    code, reason, msgs = expect_close(a)
    refused = [m for m in msgs if m.get("type") == "refused"]
    R.check("pupil join twice", code == 1008 and len(refused) == 1 and refused[0].get("why") == "joined",
            f"replies {[m.get('why') for m in refused]}, close {code} {reason!r}")
    b.close_clients()


def group_protocol(b):
    def joined():
        c = b.ws()
        c.join(b.code, "Probe")
        return c
    long_name = "x" * 25

    def unmasked(c): c.send_frame(json.dumps({"type": "ping", "sent": 1}), mask=False)
    def binary(c): c.send_frame(b'{"type":"ping","sent":1}', opcode=2)
    def fragment(c): c.send_frame(b'{"type":"ping",', fin=False)
    def rsv(c): c.send_frame(b'{"type":"ping","sent":1}', rsv=4)
    def bad_utf8(c): c.send_frame(b'{"type":"join","code":"1234","name":"\xc3\x28"}')
    def huge_header(c): c.sock.sendall(bytes([0x81, 0xFF]) + struct.pack(">Q", 1 << 40) + os.urandom(4))
    def bad_opcode(c): c.send_frame(b"x", opcode=3)
    cases = [
        ("malformed JSON", lambda c: c.send_frame('{"type":"strike",'), 1008, True),
        ("not an object", lambda c: c.send_frame("[1,2]"), 1008, True),
        ("unknown type", lambda c: c.send({"type": "shout"}), 1008, True),
        ("missing velocity", lambda c: c.send({"type": "strike", "note": 60}), 1008, True),
        ("extra field", lambda c: c.send({"type": "ping", "sent": 1, "x": 1}), 1008, True),
        ("note 128", lambda c: c.send(strike(128)), 1008, True),
        ("note 60.5", lambda c: c.send({"type": "strike", "note": 60.5, "velocity": 100}), 1008, True),
        ("velocity 0", lambda c: c.send(strike(60, 0)), 1008, True),
        ("note as a string", lambda c: c.send({"type": "strike", "note": "60", "velocity": 100}), 1008, True),
        ("negative ping", lambda c: c.send({"type": "ping", "sent": -1}), 1008, True),
        ("code not 4 digits", lambda c: c.send({"type": "join", "code": "12a4", "name": "X"}), 1008, True),
        ("name of 25", lambda c: c.send({"type": "join", "code": b.code, "name": long_name}), 1008, True),
        ("name with a control", lambda c: c.send({"type": "join", "code": b.code, "name": "a\u0007b"}), 1008, True),
        ("257 bytes", lambda c: c.send_frame('{"type":"ping","sent":1' + " " * 233 + "}"), 1009, True),
        ("2^40 byte header", huge_header, 1009, True),
        ("unmasked", unmasked, 1002, True),
        ("binary", binary, 1003, True),
        ("fragmented", fragment, 1003, True),
        ("RSV bits", rsv, 1002, True),
        ("opcode 3", bad_opcode, 1002, True),
        ("invalid UTF-8", bad_utf8, 1007, True),
    ]
    assert len(b'{"type":"ping","sent":1' + b" " * 233 + b"}") == 257
    for name, send, want, counts in cases:
        c = joined()
        send(c)
        code, reason, _ = expect_close(c)
        gone = ended(c)
        if counts:
            b.expect["malformed"] += 1
        R.check(f"protocol {name}", code == want and gone, f"close {code} (want {want}) {reason[:70]!r}, TCP closed after: {gone}")
        c.close()
    # Before joining: a strike, and a join with the name missing.
    for name, message in [("strike before join", strike(60)), ("release before join", {"type": "release", "note": 60})]:
        c = b.ws()
        c.send(message)
        code, reason, _ = expect_close(c)
        b.expect["malformed"] += 1
        R.check(f"protocol {name}", code == 1008, f"close {code} {reason!r}")
        c.close()
    # A clean close, and a ping frame, are not malformed.
    c = joined()
    c.send_frame(b"", opcode=9)
    c.send({"type": "ping", "sent": 7})
    pong = c.recv_type("pong", timeout=2)
    c.send_frame(struct.pack(">H", 1000), opcode=8)
    code, reason, _ = expect_close(c)
    R.check("protocol close frame", code == 1000 and pong.get("sent") == 7 and ended(c),
            f"ping frame then pong {pong.get('sent')}, close answered with {code}")
    b.close_clients()


def group_codes(b):
    results = []
    for k in range(5):
        c = b.ws(source="127.0.0.3")
        c.send({"type": "join", "code": b.wrong_code, "name": f"Guess{k}"})
        code, reason, msgs = expect_close(c)
        results.append((code, [m.get("why") for m in msgs if m.get("type") == "refused"]))
        b.expect["wrong"] += 1
        c.close()
    R.check("codes 5 wrong from 127.0.0.3", all(r == (1008, ["code"]) for r in results),
            f"{[f'{w}/{code}' for code, w in results]}")
    c = b.ws(source="127.0.0.3")
    c.send({"type": "join", "code": b.code, "name": "Right"})
    code, reason, msgs = expect_close(c)
    refused = [m for m in msgs if m.get("type") == "refused"]
    R.check("codes 6th from 127.0.0.3 locked", code == 1008 and len(refused) == 1 and refused[0].get("why") == "locked"
            and "Wait" in refused[0].get("text", ""),
            f"right code refused {[m.get('why') for m in refused]} {refused[0].get('text') if refused else ''!r}, close {code}")
    c.close()
    c = b.ws(source="127.0.0.4")
    c.send({"type": "join", "code": b.wrong_code, "name": "Other"})
    code, reason, msgs = expect_close(c)
    b.expect["wrong"] += 1
    why = [m.get("why") for m in msgs if m.get("type") == "refused"]
    c.close()
    c = b.ws(source="127.0.0.4")
    w = c.join(b.code, "Other")
    R.check("codes other address not locked", code == 1008 and why == ["code"] and w.get("name") == "Other",
            f"127.0.0.4: wrong code {why}/{code}, then joined as {w.get('name')!r}")
    b.close_clients()


def group_teacher(b):
    t = b.ws("/teacher/ws")
    first = t.recv_type("room", timeout=3)
    keys = {"malformed", "wrongCodes", "lockedOut", "full", "rateLimited", "notHeld", "removed"}
    R.check("teacher room message", t.status == 101 and first["code"] == b.code and first["mode"] == "free"
            and first["maximumDevices"] == 64 and first["maximumConnections"] == 96 and first["joinURL"] == b.join_url
            and notes_of(first["bells"]) == NOTES and set(first["counters"]) == keys
            and first["strikesPerSecond"] == 10 and first["strikeBurst"] == 20,
            f"code {first['code']}, mode {first['mode']}, maximumDevices {first['maximumDevices']}, maximumConnections "
            f"{first['maximumConnections']}, joinURL {first['joinURL']}, {len(first['bells'])} bells, counters {sorted(first['counters'])}")
    base = first["counters"]
    pupils = []
    for name in ["Ann", "Ben", "Cat"]:
        c = b.ws()
        w = c.join(b.code, name)
        pupils.append((c, w["id"], name))
    (a, ida, _), (bb, idb, _), (cc, idc, _) = pupils
    want = [(ida, "Ann"), (idb, "Ben"), (idc, "Cat")]
    room, last = wait_room(t, lambda m: room_devices(m) == want)
    R.check("teacher sees 3 pupils", room is not None and all(d["address"] == "127.0.0.1" and d["bells"] == NOTES and d["strikes"] == 0
                                                             for d in room["devices"]),
            f"devices {room_devices(room or last)}, want {want}")

    # Deal two bells to Ann.
    t.send({"type": "deal", "device": ida, "notes": [60, 62]})
    got = [c.recv_type("bells", timeout=2) for c, _, _ in pupils]
    R.check("teacher deal", [notes_of(m["bells"]) for m in got] == [[60, 62], [], []],
            f"bells: Ann {notes_of(got[0]['bells'])}, Ben {notes_of(got[1]['bells'])}, Cat {notes_of(got[2]['bells'])}")
    room, last = wait_room(t, lambda m: m["mode"] == "dealt" and m["devices"][0]["bells"] == [60, 62])
    R.check("teacher mode dealt", room is not None, f"mode {(room or last)['mode']}, Ann holds {(room or last)['devices'][0]['bells']}")
    a.send(strike(64))
    msgs, closed = collect(a, 0.5)
    no_rang = [m for m in msgs if m.get("type") == "rang"]
    a.send(strike(60))
    rang = a.recv_type("rang", timeout=2)
    b.expect["rang"] += 1
    R.check("teacher strike not dealt", not no_rang and closed is None and rang.get("note") == 60,
            f"strike 64: {len(no_rang)} rang in 0.5 s; strike 60: rang {rang.get('note')}")
    room, last = wait_room(t, lambda m: m["counters"]["notHeld"] == base["notHeld"] + 1 and m["devices"][0]["strikes"] == 1)
    R.check("teacher counts the strike not held", room is not None,
            f"notHeld {(room or last)['counters']['notHeld']} (was {base['notHeld']}), Ann's strikes {(room or last)['devices'][0]['strikes']}")

    t.send({"type": "dealRound"})
    got = [notes_of(c.recv_type("bells", timeout=2)["bells"]) for c, _, _ in pupils]
    every = sorted(n for g in got for n in g)
    R.check("teacher dealRound", got == [NOTES[0::3], NOTES[1::3], NOTES[2::3]] and every == NOTES,
            f"Ann {got[0]}, Ben {got[1]}, Cat {got[2]}; all 13 once: {every == NOTES}")

    t.send({"type": "velocity", "fixed": 100})
    got = [c.recv_type("bells", timeout=2) for c, _, _ in pupils]
    bb.send(strike(61, 5))
    rang = bb.recv_type("rang", timeout=2)
    b.expect["rang"] += 1
    room, last = wait_room(t, lambda m: m["fixedVelocity"] == 100)
    R.check("teacher fixed velocity", all(m["fixedVelocity"] == 100 for m in got) and rang.get("note") == 61 and room is not None,
            f"pupils told {[m['fixedVelocity'] for m in got]}, Ben's strike 61 at 5 rang {rang.get('note')}, "
            f"room fixedVelocity {(room or last)['fixedVelocity']}")
    t.send({"type": "velocity", "fixed": None})
    got = [c.recv_type("bells", timeout=2) for c, _, _ in pupils]
    R.check("teacher velocity as struck", all(m["fixedVelocity"] is None for m in got),
            f"pupils told {[m['fixedVelocity'] for m in got]}")

    # The teacher's room menu: asked of the session through the player, taken by the engine
    # playing (the live engine holds every room), said in the terminal and shown back.
    def choose_room(name, preset, said):
        t.send({"type": "reverb", "preset": preset})
        room, last = wait_room(t, lambda m: m["reverb"] == preset)
        deadline = time.monotonic() + 2
        while said not in b.text() and time.monotonic() < deadline:
            time.sleep(0.02)
        R.check(name, room is not None and said in b.text(),
                f"room message reverb {(room or last)['reverb']}, terminal said {said!r}: {said in b.text()}")
    choose_room("teacher room", "church", "room: church")
    choose_room("teacher room off", "off", "room: off (no reverb)")
    # Back in the bundled map's hall, for the groups after this one.
    t.send({"type": "reverb", "preset": "hall"})
    wait_room(t, lambda m: m["reverb"] == "hall")

    t.send({"type": "free"})
    got = [notes_of(c.recv_type("bells", timeout=2)["bells"]) for c, _, _ in pupils]
    room, last = wait_room(t, lambda m: m["mode"] == "free")
    R.check("teacher free", all(g == NOTES for g in got) and room is not None and all(d["bells"] == NOTES for d in room["devices"]),
            f"pupils hold {[len(g) for g in got]} bells, mode {(room or last)['mode']}")

    errors = []
    for bad in ['{"type":"deal","device":1}', "nope", '{"type":"remove","device":0}', '{"type":"volume","decibels":99}',
                '{"type":"free","x":1}']:
        t.send_frame(bad)
        try:
            m = t.recv_type("error", timeout=2)
            errors.append(m.get("text", "")[:40])
        except (TimeoutError, socket.timeout, Closed) as e:
            errors.append(f"none: {e}")
    t.send({"type": "free"})
    for c, _, _ in pupils:
        c.recv_type("bells", timeout=2)
    room, last = wait_room(t, lambda m: True, timeout=2)
    R.check("teacher bad messages", len(errors) == 5 and not any(e.startswith("none") for e in errors) and room is not None,
            f"errors {errors}; a room message after: {room is not None}")

    t.send({"type": "remove", "device": idc})
    removed = cc.recv_type("removed", timeout=2)
    code, reason, _ = expect_close(cc)
    room, last = wait_room(t, lambda m: room_devices(m) == want[:2] and m["counters"]["removed"] == base["removed"] + 1)
    R.check("teacher remove", removed.get("type") == "removed" and code == 1008 and room is not None,
            f"Cat told {removed.get('type')}, close {code} {reason!r}; devices {room_devices(room or last)}, "
            f"removed {(room or last)['counters']['removed']}")

    quiet_room(t)
    bb.close()
    nxt, _ = wait_room(t, lambda m: True, timeout=3)
    R.check("teacher pupil left", nxt is not None and room_devices(nxt) == want[:1],
            f"next room message lists {room_devices(nxt)}")
    b.close_clients()


def group_follow(b):
    """The follow-along over the socket: the teacher starts the demo at 200 %; two pupils hold
    the bells dealt round. Ann strikes each of her first cues exactly when due (stamped with
    the cue's own time): on time, 0 ms. Ben lets his first cue pass (missed), strikes his second
    300 ms late and his third 200 ms early. The pages' and the teacher's counts must say so."""
    import socket as _socket
    t = b.ws("/teacher/ws")
    t.recv_type("room", timeout=3)
    a, bn = b.ws(), b.ws()
    ida = a.join(b.code, "Ann")["id"]
    idb = bn.join(b.code, "Ben")["id"]
    t.send({"type": "dealRound"})
    held = {}
    for c, who in ((a, "Ann"), (bn, "Ben")):
        held[who] = notes_of(c.recv_type("bells", timeout=2)["bells"])
    # bellkeys' clock against ours, as the page measures it (loopback: the round trip is tiny).
    t1 = time.monotonic() * 1000
    a.send({"type": "ping", "sent": t1})
    pong = a.recv_type("pong", timeout=2)
    t4 = time.monotonic() * 1000
    offset = pong["received"] - (t1 + t4) / 2
    t.send({"type": "follow", "tune": 0, "tempo": 200})
    started = [c.recv_type("follow", timeout=2) for c in (a, bn)]
    cues = {"Ann": [], "Ben": []}
    judged = {"Ann": [], "Ben": []}
    plan = {"Ben": [None, 300, -200]}      # per cue: strike this many ms off, or not at all
    strikes = []                            # (when, client, note, at)
    deadline = time.monotonic() + 12
    done = lambda: len(judged["Ann"]) >= 3 and len(judged["Ben"]) >= 3
    while time.monotonic() < deadline and not done():
        for c, who in ((a, "Ann"), (bn, "Ben")):
            try:
                m = c.recv(timeout=0.005)
            except (_socket.timeout, TimeoutError):
                continue
            if m.get("type") == "cue":
                k = len(cues[who])
                cues[who].append(m)
                if who == "Ann" and k < 3:
                    strikes.append((m["at"] - offset, c, m["note"], m["at"]))
                elif who == "Ben" and k < 3 and plan["Ben"][k] is not None:
                    at = m["at"] + plan["Ben"][k]
                    strikes.append((at - offset, c, m["note"], at))
            elif m.get("type") == "judged":
                judged[who].append((m["result"], m["ms"]))
        now = time.monotonic() * 1000
        for item in [x for x in strikes if x[0] <= now]:
            strikes.remove(item)
            _, c, note, at = item
            c.send({"type": "strike", "note": note, "velocity": 90, "at": at})
            b.expect["rang"] += 1
    t.send({"type": "stopFollow"})
    stopped = [c.recv_type("follow", timeout=2)["state"] for c in (a, bn)]
    R.check("follow started", all(m["state"] == "started" and m["tempo"] == 200 and "Westminster" in m["name"] for m in started)
            and all(c["note"] in held[who] for who in cues for c in cues[who]) and stopped == ["stopped", "stopped"],
            f"pages told {[m['state'] for m in started]} at tempo {started[0].get('tempo')}; cues Ann {len(cues['Ann'])}, Ben "
            f"{len(cues['Ben'])}, each of a bell the pupil holds: {all(c['note'] in held[who] for who in cues for c in cues[who])}; then {stopped}")
    # Ben's come in the order their windows close or his strikes land, not the cues' order.
    R.check("follow judged on the page", judged["Ann"][:3] == [("onTime", 0)] * 3
            and sorted(judged["Ben"][:3], key=str) == sorted([("missed", None), ("late", 300), ("early", -200)], key=str),
            f"Ann {judged['Ann'][:3]}, Ben {judged['Ben'][:3]}")
    room, last = wait_room(t, lambda m: m.get("follow") is not None and not m["follow"]["running"])
    room = room or last
    tally = {d["id"]: d.get("follow") for d in room["devices"]}
    ann, ben = tally.get(ida) or {}, tally.get(idb) or {}
    R.check("follow tallies for the teacher", ann.get("onTime", 0) >= 3 and ann.get("early") == 0 and ann.get("late") == 0
            and ben.get("late") == 1 and ben.get("early") == 1 and ben.get("missed", 0) >= 1
            and room["follow"]["onTimeMs"] == 150 and room["follow"]["windowMs"] == 600,
            f"Ann {ann}, Ben {ben}; on time within {room['follow']['onTimeMs']} ms, window {room['follow']['windowMs']} ms")
    # Free play again for the groups after this one.
    t.send({"type": "free"})
    wait_room(t, lambda m: m["mode"] == "free")
    b.close_clients()


def group_gone(b):
    """A device that disappears releases what it held, as an unplugged keyboard: a pupil strikes
    F4 (a damped bell of the bundled map, 0.4 s release, ringing for seconds otherwise) and
    holds it; another page watches the lights. F4 still sounds 1 s later; once the striker's
    connection drops, it stops within its release."""
    watcher, striker = b.ws(), b.ws()
    watcher.join(b.code, "Watcher")
    striker.join(b.code, "Striker")
    collect(watcher, 0.3, quiet=0.2)

    def lit_until(pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                m = watcher.recv(timeout=max(0.01, deadline - time.monotonic()))
            except (socket.timeout, TimeoutError):
                break
            if m.get("type") == "lit" and pred(m["notes"]):
                return time.monotonic()
        return None

    striker.send(strike(65))
    b.expect["rang"] += 1
    on = lit_until(lambda notes: 65 in notes, 2)
    still = lit_until(lambda notes: 65 not in notes, 1.0) if on else None
    dropped = time.monotonic()
    striker.sock.close()
    b.clients.remove(striker)
    off = lit_until(lambda notes: 65 not in notes, 3)
    R.check("gone releases held bells", on is not None and still is None and off is not None and off - dropped < 0.9,
            f"F4 lit: {on is not None}; still sounding 1 s later: {still is None}; "
            + (f"off {(off - dropped) * 1000:.0f} ms after the striker's connection dropped (release 0.4 s; bound 0.9 s)"
               if off else "never off after the drop"))
    b.close_clients()


def group_resume(b):
    """A page whose connection dropped comes back with the welcome's token as the same device,
    with its bells; its old connection is closed. A token bellkeys never gave (a page from
    before a restart) is refused as "changed", and is not counted as a wrong code."""
    t = b.ws("/teacher/ws")
    before = t.recv_type("room", timeout=3)["counters"]["wrongCodes"]
    old = b.ws()
    w = old.join(b.code, "Rae")
    t.send({"type": "deal", "device": w["id"], "notes": [64, 67]})
    old.recv_type("bells", timeout=2)
    new = b.ws()
    new.send({"type": "join", "code": b.code, "name": "Rae", "resume": w["resume"]})
    back = new.recv_type("welcome", timeout=2)
    code, reason, _ = expect_close(old, timeout=2)
    R.check("resume same device", back["id"] == w["id"] and back["name"] == "Rae" and notes_of(back["bells"]) == [64, 67]
            and code == 1008 and reason == "this device joined again",
            f"came back as {back['id']} {back['name']!r} (was {w['id']}) holding {notes_of(back['bells'])}; the old connection closed {code} {reason!r}")
    stale = b.ws()
    stale.send({"type": "join", "code": b.code, "name": "Old", "resume": "00000000deadbeef"})
    m = stale.recv_type("refused", timeout=2)
    t.send({"type": "free"})
    room, last = wait_room(t, lambda m: m["mode"] == "free")
    after = (room or last)["counters"]["wrongCodes"]
    R.check("resume stale token", m["why"] == "changed" and after == before,
            f"refused {m['why']!r}: {m['text']!r}; wrong codes {before} before, {after} after")
    b.close_clients()


def group_full(b):
    pupils = []
    for name in ["P1", "P2", "P3"]:
        c = b.ws()
        pupils.append((c, c.join(b.code, name)))
    c4 = b.ws()
    c4.send({"type": "join", "code": b.code, "name": "P4"})
    code, reason, msgs = expect_close(c4)
    why = [m.get("why") for m in msgs if m.get("type") == "refused"]
    R.check("full 4th of 3", [w.get("name") for _, w in pupils] == ["P1", "P2", "P3"] and why == ["full"] and code == 1008,
            f"joined {[w.get('name') for _, w in pupils]}, 4th refused {why}, close {code}")
    pupils[2][0].close()
    joined, attempts = None, 0
    deadline = time.monotonic() + 2
    while joined is None and time.monotonic() < deadline:
        attempts += 1
        c = b.ws()
        c.send({"type": "join", "code": b.code, "name": "P4"})
        try:
            m = c.recv_type("welcome", timeout=1)
            joined = (c, m)
        except (Closed, TimeoutError, socket.timeout):
            c.close()
            time.sleep(0.1)
    R.check("full after one left", joined is not None and joined[1].get("name") == "P4",
            f"P3 closed; P4 joined at attempt {attempts}: {joined is not None}")
    b.kept = [pupils[0][0], pupils[1][0]] + ([joined[0]] if joined else [])
    t = b.ws("/teacher/ws")
    room = t.recv_type("room", timeout=2)
    R.check("full teacher", room["maximumDevices"] == 3 and room["maximumConnections"] == 35
            and [d["name"] for d in room["devices"]] == ["P1", "P2", "P4"] and room["counters"]["full"] == 1,
            f"maximumDevices {room['maximumDevices']}, maximumConnections {room['maximumConnections']}, devices "
            f"{[d['name'] for d in room['devices']]}, refused full {room['counters']['full']}")
    b.close_clients()
