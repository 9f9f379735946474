#!/usr/bin/env python3
"""Where the room's cost goes, bellkeys alone on peers.py's densest workload (dense-1024):

    python3 Benchmarks/room-cost.py          (BELLKEYS_BIN=path to use a built binary;
                                              otherwise .build/release/bellkeys, built first)

Renders the same MIDI file with five maps over the bundled bells (all ringing): dry, every key
panned (-0.6 to 0.6 from C4 to C5), the hall (reverbMix 0.3), both, and pan with the small
room; seven times each, interleaved, and a 30 s silent file likewise. Prints the median CPU time
(user + system of the process) and that less the silent file's (start-up, loading, writing):
the cost of mixing the voices, panning them and running the room.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import peers  # noqa: E402  (the workloads, the MIDI writer and the CPU timer are peers.py's)

binary = os.environ.get("BELLKEYS_BIN")
if not binary:
    subprocess.run(["swift", "build", "-c", "release", "--product", "bellkeys"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    binary = os.path.join(ROOT, ".build", "release", "bellkeys")
work = tempfile.mkdtemp(prefix="bellkeys-room-cost-")
song, silence, out = os.path.join(work, "dense.mid"), os.path.join(work, "silent.mid"), os.path.join(work, "out.wav")
peers.write_midi(song, peers.workloads(False)["dense-1024"], controllers=[(91, 127)])
peers.write_midi(silence, [], seconds=30.0)
base = json.load(open(peers.PLAIN_MAP))
base["noteOff"], base["polyphony"] = "ring", 65536
for key in base["keys"]:
    key["sample"] = os.path.normpath(os.path.join(os.path.dirname(peers.PLAIN_MAP), key["sample"]))


def make_map(name, pan, reverb):
    m = json.loads(json.dumps(base))
    if pan:
        for i, key in enumerate(m["keys"]):
            key["pan"] = -0.6 + 1.2 * i / 12
    if reverb:
        m["reverb"], m["reverbMix"] = reverb, 0.3
    path = os.path.join(work, name + ".json")
    json.dump(m, open(path, "w"))
    return path


maps = {"dry": make_map("dry", False, None), "pan": make_map("pan", True, None),
        "hall": make_map("hall", False, "hall"), "pan+hall": make_map("panhall", True, "hall"),
        "pan+room": make_map("panroom", True, "room")}
cpu = {k: [] for k in maps}
silent = {k: [] for k in maps}
for _ in range(7):
    for name, path in maps.items():
        cpu[name].append(peers.run([binary, "render", song, "-o", out, "--map", path, "--quiet"])[0])
        silent[name].append(peers.run([binary, "render", silence, "-o", out, "--map", path, "--quiet"], ok=(0, 3))[0])
dry = statistics.median(cpu["dry"]) - statistics.median(silent["dry"])
print(f"room-cost: {binary}, dense-1024, median of 7")
for name in maps:
    c, s = statistics.median(cpu[name]), statistics.median(silent[name])
    print(f"{name:<10} CPU {c * 1000:6.1f} ms   silent 30 s {s * 1000:5.1f} ms   mixing {1000 * (c - s):6.1f} ms"
          f"   against dry {100 * ((c - s) / dry - 1):+5.1f} %")
