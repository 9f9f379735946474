"""Tests/Web/run's group on a map of several sets (bell-sets.json's, written to the run's folder
with the example maps they name: Handbells, 8 damped bells C4..C5; Tower, 6 bells C4..A4 that ring
on; Plain, 13 damped bells) and a --web-tune of B4 and C#4: the teacher chooses the classroom's
set; every page gets the set's bells and its name; a bell dealt that the new set lacks is taken
back, the others kept; bellkeys plays the set (its log line); a bell only the new set has lights;
the follow-along cues only the set's bells, a tune with no note on them is refused, and one
under way stops when the set's notes change; a set the map lacks, and the choice on a map of one
instrument, are refused with the fix; after a reload (SIGHUP) that puts a new set first, the
teacher's menu and the pages follow the map as it is now.
"""
import json
import re
import signal
import sys
import time

from run_harness import ROOT, R, collect, notes_of, wait_room

sys.path.insert(0, str(ROOT / "Tools" / "python"))
import smf  # noqa: E402

EXAMPLES = ROOT / "Samples" / "examples"
SETS = [("Handbells", "handbells.json"), ("Tower", "tower-ring.json"), ("Plain", "plain.json")]


def sets_map(sets):
    """A map of `sets` [(name, example file)], programs 0, 1, ... in SETS' order (a set not in
    SETS: program 5): its JSON."""
    names = [n for n, _ in SETS]
    return json.dumps({"sets": [{"name": name, "program": names.index(name) if name in names else 5,
                                 "map": str(EXAMPLES / file)} for name, file in sets]})


def write_files(folder):
    """The map of sets and the tune (B4 then C#4, a beat apart), in `folder`: the options for bellkeys."""
    (folder / "sets.json").write_text(sets_map(SETS))
    smf.write(folder / "b-csharp.mid", [(0, smf.message(0x90, 71, 100)), (480, smf.message(0x80, 71)),
                                         (480, smf.message(0x90, 61, 100)), (960, smf.message(0x80, 61))], division=480)
    return ["--map", str(folder / "sets.json"), "--web-tune", str(folder / "b-csharp.mid")]


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
    # The tune of B4 and C#4: neither on the tower (refused), one on the handbells, both on Plain.
    tune_cues = {1: [t["cues"] for t in room["tunes"]]}
    t.send({"type": "follow", "tune": 1, "tempo": 100})
    refused = t.recv_type("error", timeout=2).get("text", "")
    R.check("sets: a tune with no note on the set is refused",
            refused == "tune: no note of b-csharp.mid falls on the bells of Tower; choose another tune, or a set with its notes",
            f"the tune's cues on the tower {tune_cues[1][1]}; starting it: {refused!r}")

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

    # Plain: C#4 is only Plain's, and lights when struck; the tune's notes are both on it.
    t.send({"type": "set", "index": 2})
    for c in (a, bn):
        c.recv_type("bells", timeout=3)
    room, last = wait_room(t, lambda m: m.get("set") == 2)
    tune_cues[2] = [x["cues"] for x in (room or last)["tunes"]]
    a.send({"type": "strike", "note": 61, "velocity": 90})
    b.expect["rang"] += 1
    lit, deadline = None, time.monotonic() + 2
    while time.monotonic() < deadline and lit is None:
        try:
            m = a.recv(timeout=0.2)
        except Exception:
            continue
        if m.get("type") == "lit" and 61 in m["notes"]:
            lit = m["notes"]
    R.check("sets: a bell only the new set has lights", lit is not None, f"Ann strikes C#4 on Plain: lit {lit}")
    t.send({"type": "set", "index": 0})
    room, last = wait_room(t, lambda m: m.get("set") == 0)
    tune_cues[0] = [x["cues"] for x in (room or last)["tunes"]]
    R.check("sets: the tunes are cued on each set's bells",
            tune_cues[0][1] == 1 and tune_cues[1][1] == 0 and tune_cues[2][1] == 2,
            f"b-csharp.mid's cues on Handbells, Tower, Plain: {tune_cues[0][1]}, {tune_cues[1][1]}, {tune_cues[2][1]} (want 1, 0, 2)")

    errors = []
    for bad in [{"type": "set", "index": 3}, {"type": "set", "index": -1}, {"type": "set"}]:
        t.send(bad)
        errors.append(t.recv_type("error", timeout=2).get("text", ""))
    R.check("sets: a set the map lacks is refused", errors[0] == "set: there is no set 3; give 0 to 2"
            and all(e.startswith("index:") for e in errors[1:]), f"errors {errors}")
    wait_room(t, lambda m: m.get("set") == 0)

    # A reload that puts a new set first: the class plays the handbells still (the channel's
    # program is replayed), now the second set; the menu and the pages follow the new map.
    folder = b.log_path.parent
    (folder / "sets.json").write_text(sets_map([("Plain first", "plain.json")] + SETS))
    for c in (t, a, bn):
        collect(c, 0.3)
    b.proc.send_signal(signal.SIGHUP)
    room, last = wait_room(t, lambda m: len(m.get("sets", [])) == 4, timeout=5)
    room = room or last
    told = []
    for c in (a, bn):
        try:
            told.append(c.recv_type("bells", timeout=3).get("set"))
        except Exception as e:
            told.append(f"none: {type(e).__name__}")
    R.check("sets: a reload's sets", room.get("sets") == ["Plain first"] + [n for n, _ in SETS] and room.get("set") == 1
            and notes_of(room["bells"]) == hand_notes and told == ["Handbells", "Handbells"],
            f"after SIGHUP: the teacher's menu {room.get('sets')}, set {room.get('set')}, bells {notes_of(room['bells'])}; "
            f"the pages told {told}")
    t.send({"type": "set", "index": 0})
    room, last = wait_room(t, lambda m: m.get("set") == 0)
    got = a.recv_type("bells", timeout=3)
    R.check("sets: the reloaded map's first set", room is not None and got.get("set") == "Plain first"
            and notes_of(got["bells"]) == NOTES_PLAIN,
            f"choosing set 0: the teacher's page shows set {(room or last).get('set')}, Ann's page {got.get('set')!r} "
            f"with {len(got['bells'])} bells")
    b.close_clients()


NOTES_PLAIN = list(range(60, 73))


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
