#!/usr/bin/env python3
"""Loading a large instrument: 100 MB of decoded audio ready in under 1 s, whole process.

    python3 Benchmarks/load-instrument.py                 (bellkeys from .build/release, if built)
    BELLKEYS_BIN=/path/to/bellkeys python3 Benchmarks/load-instrument.py
    python3 Benchmarks/load-instrument.py --keep DIR      (write the instrument to DIR and keep it;
                                                           a DIR already holding this instrument is reused)
    python3 Benchmarks/load-instrument.py --runs 9        (timed runs of each command, default 7)
    python3 Benchmarks/load-instrument.py --long          (the same 100 MB as 22 files of 23.7 s)

The issue's figure: "Load: an instrument of 100 MB of decoded audio (generated FLAC stand-ins)
ready in under 1 s whole process with the files in the page cache, resident memory at most the
stored samples plus 30 MB, on 2 cores." (sfizz users report 30 s and 1.2 GB for a 400 MB FLAC
library, sfizz issue 1309, from a cold cache.)

The instrument (`big.sfz`): 88 stereo FLAC files, 16-bit, 48 kHz, 284,091 frames (5.92 s) each,
so bellkeys stores 88 x 2 x 284,091 16-bit values = 100,000,032 bytes. They are laid out as a
sampled piano-like library would be: 22 zones of 4 keys (A0 to C8, the centre key the zone's
second), 2 velocity layers (1-80, 81-127, `amp_velcurve` not used) and 2 round-robin takes
(`seq_length=2`) in each: 22 x 2 x 2 = 88 files, every one a different recording. Each is a
bell-like stand-in: eight inharmonic partials of the zone's pitch (ratios 0.5, 1, 1.19, 1.5, 2,
2.51, 2.66, 3.01), each with its own decay (2.5 s for the lowest down to 0.4 s), slightly
different on the two sides, over a noise floor at about -42 dBFS that decays over 4 s, so FLAC
cannot shrink the files to nothing (about 62 % of their WAV size); the peak is -1 dBFS. numpy
writes the values and libsndfile (the library bellkeys itself reads them with, through ctypes)
encodes the FLAC files: nothing to install beyond numpy and what bellkeys needs. `--long` lays
the same 100 MB out as 22 files of 1,136,364 frames (23.7 s; one layer, one take), which shows
how the peak memory depends on the length of a file (a loader holds a file or two decoded
outside the bank while it works).

The measurement. The page cache is warmed first (every file read once), then the two commands
run in turn, A B A B, one unmeasured warm-up of each and then --runs timed runs of each:

    $BELLKEYS_BIN check --map DIR/big.sfz     (loads and decodes every sample, prints, exits)
    $BELLKEYS_BIN check                       (the bundled 13 bells: start-up's fixed cost)

For each run: wall seconds (a monotonic clock around the child), CPU seconds (user + system of
the child, from wait4), the child's peak resident memory (ru_maxrss; the child is started by a
fresh, small Python, whose 8 MB is then the floor of that figure, not this script's size), and
what check prints itself: the bank's bytes ("KiB of samples"), its own "loaded in" time and its
peak memory (VmHWM). The medians are reported with the min and max. Verdicts: the big instrument's median
wall time under 1 s, and its median peak resident memory at most the stored bytes plus 30 MB
(10^6 bytes). Needs numpy and libsndfile (Debian's libsndfile1, which bellkeys links).
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

RATE = 48000
FRAMES = 284_091  # 88 files x 2 channels x 284,091 frames x 2 bytes = 100,000,032 bytes stored
ZONES = 22  # 4 keys each, A0 (21) to C8 (108)
LAYERS = [(1, 80), (81, 127)]
TAKES = 2  # round robin
PARTIALS = [(0.5, 2.5), (1.0, 2.0), (1.19, 1.5), (1.5, 1.2), (2.0, 1.0), (2.51, 0.7), (2.66, 0.6), (3.01, 0.4)]
NOISE_DBFS = -42.0
PEAK_DBFS = -1.0
WALL_BOUND_SECONDS = 1.0
MEMORY_MARGIN_BYTES = 30_000_000


def parameters():
    return {"rate": RATE, "frames": FRAMES, "zones": ZONES, "layers": LAYERS, "takes": TAKES,
            "partials": PARTIALS, "noise": NOISE_DBFS, "peak": PEAK_DBFS, "version": 1}


def use_long_files():
    """--long: 22 files of four times the length, the same stored bytes."""
    global FRAMES, LAYERS, TAKES
    FRAMES, LAYERS, TAKES = 4 * 284_091, [(1, 127)], 1

# libsndfile through ctypes (sndfile.h).
SF_FORMAT_FLAC = 0x170000
SF_FORMAT_PCM_16 = 0x0002
SFM_WRITE = 0x20


class SF_INFO(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


def sndfile():
    name = ctypes.util.find_library("sndfile") or "libsndfile.so.1"
    lib = ctypes.CDLL(name)
    lib.sf_open.restype = ctypes.c_void_p
    lib.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(SF_INFO)]
    lib.sf_writef_short.restype = ctypes.c_int64
    lib.sf_writef_short.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    lib.sf_close.argtypes = [ctypes.c_void_p]
    lib.sf_strerror.restype = ctypes.c_char_p
    lib.sf_strerror.argtypes = [ctypes.c_void_p]
    return lib


def write_flac(lib, path, interleaved):
    """Writes 16-bit interleaved stereo `interleaved` (int16, frames x 2) as FLAC."""
    info = SF_INFO(0, RATE, 2, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 0, 0)
    handle = lib.sf_open(path.encode(), SFM_WRITE, ctypes.byref(info))
    if not handle:
        sys.exit(f"libsndfile cannot create {path}: {lib.sf_strerror(None).decode()}")
    data = np.ascontiguousarray(interleaved, dtype=np.int16)
    written = lib.sf_writef_short(handle, data.ctypes.data, len(data))
    lib.sf_close(handle)
    if written != len(data):
        sys.exit(f"libsndfile wrote {written} of {len(data)} frames to {path}")


def recording(centre_key, layer, take):
    """One stand-in recording: frames x 2 int16."""
    rng = np.random.default_rng(1000 * centre_key + 10 * layer + take)
    t = np.arange(FRAMES) / RATE
    f0 = 440.0 * 2 ** ((centre_key - 69) / 12)
    sides = []
    for side in range(2):
        x = np.zeros(FRAMES)
        for ratio, decay in PARTIALS:
            f = f0 * ratio * (1 + 0.0007 * side + 0.0003 * take)
            if f >= 0.45 * RATE:
                continue
            amplitude = rng.uniform(0.5, 1.0) / ratio
            x += amplitude * np.exp(-t / (decay * (1.3 if layer == 0 else 1.0))) * np.sin(
                2 * np.pi * f * t + rng.uniform(0, 2 * np.pi))
        x /= np.max(np.abs(x))
        x += 10 ** (NOISE_DBFS / 20) * np.exp(-t / 4.0) * rng.standard_normal(FRAMES)
        sides.append(x)
    both = np.stack(sides, axis=1)
    level = 10 ** (PEAK_DBFS / 20) * (0.5 if layer == 0 else 1.0)
    return np.round(both * (32767 * level / np.max(np.abs(both)))).astype(np.int16)


def write_instrument(folder):
    """The FLAC files and big.sfz in `folder` (reused if the folder already holds them)."""
    sfz = os.path.join(folder, "big.sfz")
    stamp = os.path.join(folder, "parameters.json")
    if os.path.exists(stamp) and os.path.exists(sfz):
        with open(stamp) as f:
            if json.load(f) == json.loads(json.dumps(parameters())):
                print(f"reusing the instrument in {folder}")
                return sfz
    os.makedirs(os.path.join(folder, "samples"), exist_ok=True)
    lib = sndfile()
    count = ZONES * len(LAYERS) * TAKES
    lines = [f"// Benchmarks/load-instrument.py: {count} stereo FLAC stand-ins of {FRAMES} frames, "
             f"{ZONES} zones x {len(LAYERS)} velocity layers x {TAKES} round-robin takes",
             "<control> default_path=samples/", "<global> ampeg_release=1.0", ""]
    began = time.monotonic()
    for zone in range(ZONES):
        low = 21 + 4 * zone
        centre = low + 1
        for layer, (lovel, hivel) in enumerate(LAYERS):
            lines.append(f"<group> lokey={low} hikey={low + 3} pitch_keycenter={centre} "
                         f"lovel={lovel} hivel={hivel} seq_length={TAKES}")
            for take in range(TAKES):
                name = f"bell_{centre:03d}_v{layer + 1}_rr{take + 1}.flac"
                write_flac(lib, os.path.join(folder, "samples", name), recording(centre, layer, take))
                lines.append(f"<region> sample={name} seq_position={take + 1}")
        lines.append("")
    with open(sfz, "w") as f:
        f.write("\n".join(lines))
    with open(stamp, "w") as f:
        json.dump(parameters(), f)
    files = os.listdir(os.path.join(folder, "samples"))
    size = sum(os.path.getsize(os.path.join(folder, "samples", n)) for n in files)
    print(f"wrote {len(files)} FLAC files, {size / 1e6:.1f} MB on disk "
          f"({size / (len(files) * FRAMES * 4):.0%} of their 16-bit size), in {time.monotonic() - began:.1f} s")
    return sfz


def warm(folder):
    """Reads every file under `folder` once, so the runs find them in the page cache."""
    total = 0
    for base, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(base, name), "rb") as f:
                while chunk := f.read(1 << 20):
                    total += len(chunk)
    return total


# Runs one command and reports on it from a fresh, small Python: a child's peak resident memory
# (ru_maxrss) counts the memory of the process it was forked from, so forking bellkeys from this
# script (numpy loaded, the recordings generated) would put a floor of this script's size under
# every figure. The launcher's own size (about 8 MB) is the floor instead, below any bellkeys run.
LAUNCHER = """
import json, os, sys, time
out = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
began = time.monotonic()
pid = os.fork()
if pid == 0:
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - began
print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)]))
"""


def run_once(command, output):
    """Runs `command` with its output to the file `output`; (wall s, CPU s, peak RSS bytes, output)."""
    report = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, output] + command,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
    wall, cpu, peak, status = json.loads(report.stdout)
    with open(output) as f:
        text = f.read()
    if status != 0:
        sys.exit(f"{' '.join(command)} failed (exit status {status}):\n{text[-2000:]}")
    return wall, cpu, peak, text


def own_figures(text):
    """What check prints of itself: (stored bytes, its own load ms, its own peak MiB)."""
    found = re.search(r"(\d+) KiB of samples, loaded in ([\d.]+) ms, peak memory ([\d.]+) MiB", text)
    if not found:
        sys.exit(f"check printed no 'KiB of samples' line:\n{text[:2000]}")
    return int(found.group(1)) * 1024, float(found.group(2)), float(found.group(3))


def spread(values, scale=1.0, digits=3):
    s = sorted(v * scale for v in values)
    return f"{statistics.median(s):.{digits}f} ({s[0]:.{digits}f} to {s[-1]:.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="write the instrument here and keep it")
    parser.add_argument("--long", action="store_true", help="22 files of 23.7 s instead of 88 of 5.9 s")
    parser.add_argument("--runs", type=int, default=7, help="timed runs of each command (default 7, at least 5)")
    args = parser.parse_args()
    bellkeys = os.environ.get("BELLKEYS_BIN") or os.path.join(ROOT, ".build", "release", "bellkeys")
    if not os.access(bellkeys, os.X_OK):
        sys.exit(f"no bellkeys at {bellkeys}: swift build -c release --product bellkeys, or set BELLKEYS_BIN")
    runs = max(5, args.runs)
    if args.long:
        use_long_files()

    folder = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="bellkeys-load-")
    try:
        sfz = write_instrument(folder)
        print(f"page cache warmed: {warm(folder) / 1e6:.1f} MB read")
        commands = {"big": [bellkeys, "check", "--map", sfz], "bundled": [bellkeys, "check"]}
        results = {name: [] for name in commands}
        output = os.path.join(folder, "check-output.txt")
        for round_ in range(runs + 1):
            for name, command in commands.items():
                figures = run_once(command, output)
                if round_ > 0:
                    results[name].append(figures)
        print(f"\n{runs} runs of each, A B A B after one warm-up each; median (min to max)")
        print(f"bellkeys: {bellkeys}")
        verdicts = []
        for name, command in commands.items():
            rows = results[name]
            stored = [own_figures(r[3])[0] for r in rows]
            print(f"\n{' '.join(['bellkeys'] + command[1:])}")
            print(f"  wall s          {spread([r[0] for r in rows])}")
            print(f"  CPU s           {spread([r[1] for r in rows])}")
            print(f"  peak RSS MB     {spread([r[2] for r in rows], 1e-6, 1)}  (MiB {spread([r[2] for r in rows], 1 / 1048576, 1)})")
            print(f"  check's own load ms  {spread([own_figures(r[3])[1] for r in rows], 1, 1)}, "
                  f"its own peak MiB {spread([own_figures(r[3])[2] for r in rows], 1, 1)}")
            print(f"  stored samples  {stored[0]:,} bytes ({stored[0] / 1e6:.1f} MB)")
            if name == "big":
                wall = statistics.median(r[0] for r in rows)
                peak = statistics.median(r[2] for r in rows)
                bound = stored[0] + MEMORY_MARGIN_BYTES
                verdicts.append(f"wall {wall:.3f} s {'<' if wall < WALL_BOUND_SECONDS else '>='} "
                                f"{WALL_BOUND_SECONDS:.0f} s: {'MET' if wall < WALL_BOUND_SECONDS else 'MISSED'}")
                verdicts.append(f"peak RSS {peak / 1e6:.1f} MB {'<=' if peak <= bound else '>'} stored "
                                f"{stored[0] / 1e6:.1f} MB + 30 MB = {bound / 1e6:.1f} MB: "
                                f"{'MET' if peak <= bound else 'MISSED'} (headroom {(bound - peak) / 1e6:+.1f} MB)")
        print("\nverdicts (big.sfz):")
        for line in verdicts:
            print("  " + line)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
