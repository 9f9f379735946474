"""Tests/Web/run's group on a map of several sets (Samples/examples/bell-sets.json: Handbells, 8
damped bells C4..C5; Tower, 6 bells C4..A4 that ring on; Plain, 13 damped bells): the teacher
chooses the classroom's set; every page gets the set's bells and its name; a bell dealt that the
new set lacks is taken back, the others kept; bellkeys plays the set (its log line); the
follow-along cues only the set's bells, and stops when the set's notes change under it; a set
the map lacks, and the choice on a map of one instrument, are refused with the fix.
"""
import json
import re
import time

from run_harness import ROOT, R, notes_of, wait_room

EXAMPLES = ROOT / "Samples" / "examples"
SETS = [("Handbells", "handbells.json"), ("Tower", "tower-ring.json"), ("Plain", "plain.json")]


def note_number(name):
    """'C4' 60, 'F#4' 66, 'Bb3' 58."""
    m = re.fullmatch(r"([A-G])([#b]?)(-?\d+)", name)
    base = {"C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11}[m.group(1)]
    return 12 * (int(m.group(3)) + 1) + base + {"#": 1, "b": -1, "": 0}[m.group(2)]


def set_notes(file):
    """The notes of a set's map, and whether its keys damp, read from the file itself."""
    m = json.loads((EXAMPLES / file).read_text())
    # A key gives its note by name, or by the tutorial's button tag (100..112: C4..C5).
    return (sorted(note_number(k["note"]) if "note" in k else 60 + k["tag"] - 100 for k in m["keys"]),
            m.get("noteOff") == "damp")


def group_sets(b):
    want = {name: set_notes(file) for name, file in SETS}
    t = b.ws("/teacher/ws")
    first = t.recv_type("room", timeout=3)
    hand_notes, hand_damps = want["Handbells"]
    R.check("sets: the teacher's menu", first.get("sets") == [n for n, _ in SETS] and first.get("set") == 0
            and notes_of(first["bells"]) == hand_notes and all(x["damps"] == hand_damps for x in first["bells"]),
            f"sets {first.get('sets')}, set {first.get('set')}, bells {notes_of(first['bells'])} (want the handbells' "
            f"{hand_notes}), damping {[x['damps'] for x in first['bells']]}")
    a, bn = b.ws(), b.ws()
    wa, wb = a.join(b.code, "Ann"), bn.join(b.code, "Ben")
    R.check("sets: a page joins told the set", wa.get("set") == "Handbells" and notes_of(wa["bells"]) == hand_notes
            and wb.get("set") == "Handbells", f"Ann's welcome: set {wa.get('set')!r}, bells {notes_of(wa['bells'])}")

    # Dealt round: Ann C4 E4 G4 B4, Ben D4 F4 A4 C5. The tower has C4..A4: Ann keeps C4 E4 G4, Ben D4 F4 A4.
    t.send({"type": "dealRound"})
    held = {who: notes_of(c.recv_type("bells", timeout=2)["bells"]) for c, who in ((a, "Ann"), (bn, "Ben"))}
    tower_notes, tower_damps = want["Tower"]
    t.send({"type": "set", "index": 1})
    got = {who: c.recv_type("bells", timeout=3) for c, who in ((a, "Ann"), (bn, "Ben"))}
    kept = {who: [n for n in held[who] if n in tower_notes] for who in held}
    R.check("sets: the teacher chooses the tower", all(got[w].get("set") == "Tower" and notes_of(got[w]["bells"]) == kept[w]
                                                       for w in got) and all(not x["damps"] for w in got for x in got[w]["bells"]),
            f"dealt {held}; after: " + ", ".join(f"{w} {got[w].get('set')!r} {notes_of(got[w]['bells'])}" for w in got)
            + f" (want the dealt bells the tower has, {kept}, none damping)")
    room, last = wait_room(t, lambda m: m.get("set") == 1)
    room = room or last
    R.check("sets: the teacher's page follows", room.get("set") == 1 and notes_of(room["bells"]) == tower_notes
            and [d["bells"] for d in room["devices"]] == [kept["Ann"], kept["Ben"]],
            f"set {room.get('set')}, bells {notes_of(room['bells'])}, devices hold {[d['bells'] for d in room['devices']]}")
    line = None
    for _ in range(40):
        line = re.search(r"^set: Tower \(2 of 3\), the teacher's choice: .*$", b.text(), re.M)
        if line:
            break
        time.sleep(0.05)
    R.check("sets: bellkeys plays the tower", line is not None, line.group(0) if line else "no 'set: Tower (2 of 3)' line in the log")
    a.send({"type": "strike", "note": kept["Ann"][0], "velocity": 90})
    rang = a.recv_type("rang", timeout=2)
    b.expect["rang"] += 1
    R.check("sets: a tower bell rings", rang.get("note") == kept["Ann"][0], f"Ann strikes {kept['Ann'][0]}: rang {rang.get('note')}")

    # The follow-along on the tower's bells, then the handbells chosen under it: their notes differ, it stops.
    t.send({"type": "free"})
    for c in (a, bn):
        c.recv_type("bells", timeout=2)
    t.send({"type": "follow", "tune": 0, "tempo": 200})
    started = a.recv_type("follow", timeout=2)
    cues = []
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline and len(cues) < 4:
        try:
            m = a.recv(timeout=0.2)
        except Exception:
            continue
        if m.get("type") == "cue":
            cues.append(m["note"])
    R.check("sets: the follow-along cues the tower's bells", started.get("state") == "started" and len(cues) >= 4
            and all(n in tower_notes for n in cues), f"cues {cues} (the tower has {tower_notes})")
    t.send({"type": "set", "index": 0})
    seen, deadline = [], time.monotonic() + 3
    while time.monotonic() < deadline and not ({"bells", "stopped"} <= set(seen)):
        try:
            m = a.recv(timeout=0.2)
        except Exception:
            continue
        if m.get("type") == "bells" and m.get("set") == "Handbells":
            seen.append("bells")
        elif m.get("type") == "follow" and m.get("state") == "stopped":
            seen.append("stopped")
    R.check("sets: a new set's notes stop the follow-along", {"bells", "stopped"} <= set(seen),
            f"after choosing the handbells, Ann was told: {seen} (want the handbells' bells and the follow-along stopped)")

    errors = []
    for bad in [{"type": "set", "index": 3}, {"type": "set", "index": -1}, {"type": "set"}]:
        t.send(bad)
        errors.append(t.recv_type("error", timeout=2).get("text", ""))
    R.check("sets: a set the map lacks is refused", errors[0] == "set: there is no set 3; give 0 to 2"
            and all(e.startswith("index:") for e in errors[1:]), f"errors {errors}")
    wait_room(t, lambda m: m.get("set") == 0)
    b.close_clients()


def group_one_instrument(b):
    """On the main instance (the bundled map, one instrument): no menu, no set name, a refusal."""
    t = b.ws("/teacher/ws")
    first = t.recv_type("room", timeout=3)
    t.send({"type": "set", "index": 0})
    error = t.recv_type("error", timeout=2).get("text", "")
    c = b.ws()
    w = c.join(b.code, "Ann")
    R.check("sets: one instrument", first.get("sets") == [None] and first.get("set") == 0 and w.get("set") is None
            and error == "set: there is no set 0; the map is one instrument; a map with sets has several",
            f"sets {first.get('sets')}, set {first.get('set')}, the welcome's set {w.get('set')!r}; choosing: {error!r}")
    b.close_clients()
