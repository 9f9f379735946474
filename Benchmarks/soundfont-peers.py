#!/usr/bin/env python3
"""SoundFont presets against FluidSynth: loading a preset, and voices per core on dense workloads.

    python3 Benchmarks/soundfont-peers.py               (bellkeys from .build/release, if built)
    python3 Benchmarks/soundfont-peers.py --quick       (fewer runs, shorter workloads: a few minutes)
    python3 Benchmarks/soundfont-peers.py --runs 5      (timed runs of each command: load and renders)
    python3 Benchmarks/soundfont-peers.py --keep DIR    (keep the MIDI files and renders in DIR)
    python3 Benchmarks/soundfont-peers.py --font F.sf2  (another font with the same presets)
    python3 Benchmarks/soundfont-peers.py --skip-load   (part 2 only; --skip-throughput: part 1 only)
    BELLKEYS_BIN=/path/to/bellkeys python3 Benchmarks/soundfont-peers.py

The issue's figures: "Load the Tubular Bells preset from FluidR3_GM.sf2: ready in under 100 ms
whole process, resident memory under 40 MB. FluidSynth 2.3.1 on this kind of machine loads that
font in 0.23 to 0.44 s and holds 174 MB (46 MB with synth.dynamic-sample-loading). Mixing those
presets (Celesta 8, Glockenspiel 9, Music Box 10, Tubular Bells 14, Tinkle Bell 112): at least
10x FluidSynth's voices per core on a dense workload." Needs Debian's fluidsynth (2.3.1, with its
libfluidsynth.so.3), fluid-soundfont-gm and numpy. A figure missed is reported ("MISSED", "no"),
not an error: the script exits 0 unless a command fails, a render is silent, or the renders are
not the same music (exit 1).

Part 1, load. The font is read once (page cache warm), then these run in turn, A B C D E A B ...,
one unmeasured warm-up of each, then --runs timed runs (default 7; --quick 3), each started by a fresh,
small Python as Benchmarks/load-instrument.py starts its children (its LAUNCHER: wall clock
around the child, CPU user + system from wait4, peak resident memory ru_maxrss, whose floor is
then that Python's 8 MB, not this script's):

    a  $BELLKEYS_BIN check --map FONT --program 14      the Tubular Bells preset: the figure
    b  fluidsynth -ni -q -R 0 -C 0 -F /dev/null -T raw FONT empty.mid
                                                        FluidSynth loading the whole font, then
                                                        rendering a MIDI file with no notes
    c  b with -o synth.dynamic-sample-loading=1         (samples read when a preset is chosen:
                                                        at start every channel's default, the
                                                        piano and the standard drum kit)
    d  $BELLKEYS_BIN render empty.mid --map FONT        the whole font (every preset, as a General
                                                        MIDI file plays it), then the same MIDI
                                                        file with no notes: set against b
    e  b with a font of one 1 s sample in place of FONT  what FluidSynth holds without a font:
                                                        b minus e is the font's samples, which
                                                        shows b really loads them
    f  $BELLKEYS_BIN check --map gm-bells.json          the five General MIDI bell presets as
                                                        five sets (Samples/examples/gm-bells.json,
                                                        its font FONT): every set loaded
    g  $BELLKEYS_BIN check --map bell-sets.json         the bundled bells as three sets
    h, i  b and d with MuseScore's SF3 font (MuseScore_General_Lite.sf3, its samples Ogg Vorbis
                                                        streams, decoded at load), when installed

Reported: median (min to max) wall ms, CPU ms, peak RSS MB (10^6 bytes), and for a what check
prints of itself ("loaded in", its own VmHWM). Verdicts on a: median wall under 100 ms, median
peak RSS under 40 MB (10^6 bytes, the stricter reading); on f: under 150 ms and 50 MB; on d: a
median wall no longer than b's (the whole font ready no later than FluidSynth), peak RSS stated.

Part 2, throughput. Workloads, one per preset and one mixing all five, each many overlapping
notes: strike i at i x the preset's interval, its key stepping through the preset's range by a
stride prime to its size, velocity 30 + 37i mod 98 (30..127), held 0.5 + 1.5 x frac(0.618 i) s
(0.5..2 s), on the 15 channels other than the drums' in turn (a channel for each round of the
range), as Benchmarks/peers.py builds dense-1024. Strikes go on for 20 s (--quick: 8 s); the file
ends when the last note is released. A note is held at most until 50 ms before its key is struck
again on its channel, so no note is struck again while held (FluidSynth and bellkeys both let a
released note ring on when its key comes again; they differ only on a held one); the number of
holds shortened is printed. Ranges, and strike intervals chosen so about 500 notes sound at
once in FluidSynth once the first have rung out (from FluidSynth's mean note length over each
range, measured as below: Celesta 2.9 s, Glockenspiel 5.7 s, Music Box 1.8 s, Tubular Bells
15.8 s, Tinkle Bell 0.7 s); Tinkle Bell's short notes get about 200, as more strikes would bring
its keys round again while held:

    Celesta 8        C4..C8 (60..108)  5.7 ms     Glockenspiel 9    G5..C8 (79..108) 11.4 ms
    Music Box 10     C4..C7 (60..96)   3.8 ms     Tubular Bells 14  G3..C6 (55..84)  31.7 ms
    Tinkle Bell 112  C4..C8 (60..108)  2.5 ms
    mix              the five at once, each on 3 channels of its own (program change at time 0),
                     each at a fifth of its own workload's rate: about the average of the five.

Contenders, interleaved A B C D A B ... for --runs repeats (default 3; --quick 1), each timed as
in part 1 (CPU user + system of the whole process, loading included):

    fluidsynth       fluidsynth -ni -q -F OUT.wav -T wav -O float -r 44100 -R 0 -C 0
                       -o synth.polyphony=N -o synth.cpu-cores=1 FONT IN.mid
                     its defaults otherwise (4-point interpolation, per-voice filter, gain 0.2);
                     N at least the most voices it plays at once (measured, below) + 16.
    bellkeys-Q       $BELLKEYS_BIN render IN.mid -o OUT.wav --map FONT --program P --bank 0
                       --rate 44100 --format f32 --quality Q --polyphony 65536 --quiet
                     for Q in good, fast, best. bellkeys plays one preset a process (program
                     changes in the file change nothing), so on the mix it is five processes, one
                     per preset, each given a MIDI file of that preset's notes alone (the same
                     notes, times and channels; FluidSynth's file is their union, with the program
                     changes). Its CPU is the five processes' sum, five start-ups and loads
                     included; its output, for the checks, the five renders summed.

Counting (the metric of peers.py and transposed-peers.py): notes per core in real time = notes
sounding on average x audio seconds per CPU second = note-seconds per CPU second. The note-seconds
are FluidSynth's, measured: before the timed runs the same notes are played through
libfluidsynth (ctypes; the same settings, 64-frame blocks) and fluid_synth_get_active_voice_count
read after every block, which gives FluidSynth's voice-seconds, its most voices at once, and its
voices per note (the count just after each note-on less just before: 2 for a stereo pair, which
FluidSynth plays as two hard-panned voices, Celesta and Tubular Bells; 1 otherwise). FluidSynth
is credited with its voice-seconds / its voices per note. bellkeys plays a stereo pair as one
stereo voice (1 voice a note for all five presets; measured here by rendering single notes) and
ends a release when it has fallen 90 dB, at 90/96 of the release time in which FluidSynth's
falls 96 dB, so its notes last a little less after note-off (about 1.2 s of Tubular Bells' 19 s);
it is credited with 90/96 of FluidSynth's note-seconds, a lower bound of what it plays (the held
part is the same). The "notes" column is the notes sounding on average until FluidSynth's last
voice ends, as credited. "mixing only" takes away each process's cost of a file of the same length with
no notes (a + b x seconds, fitted on silent files of 5 s and 25 s, as peers.py), when that leaves
more than a quarter of the run. Voices per core: notes per core x each renderer's voices per
note. The 10x verdict is on notes per core (a stereo note is one note, whoever plays it), mixing
only, else whole process; the table also gives the ratio per voice as each renderer counts its
voices.

Same music (as peers.py checks it, on float renders): every render non-silent; bellkeys' length
between 0.85x the time FluidSynth's last voice ends (probe) and 0.5 s after it, FluidSynth's
between that time and 2.5 s after it (its file renderer adds 2 s); RMS level within 6 dB of
bellkeys-good's after each renderer's output gain (FluidSynth's synth.gain 0.2 is -14 dB); the
50 ms loudness envelopes correlating at 0.8 or more with bellkeys-good's. Also printed from one
untimed bellkeys-good render (without --quiet): its most voices at once, notes stolen, and how
long its output limiter was active.
"""
import argparse
import ctypes
import ctypes.util
import importlib.util
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tools", "python"))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (CHANNELS, OUTPUT_GAIN_DB: the peer benchmark's conventions)
import bells  # noqa: E402  (the float WAV reader)
import sf2  # noqa: E402  (the SoundFont writer, for the one-sample reference font)
import smf  # noqa: E402  (the MIDI file writer)

_spec = importlib.util.spec_from_file_location("load_instrument", os.path.join(HERE, "load-instrument.py"))
load_instrument = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(load_instrument)  # its LAUNCHER and spread(); its main() does not run

FONT = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
RATE = 44100
BLOCK = 64
# Ticks are frames: 441 ticks per quarter at 10,000 us per quarter (as Tests/SoundFont/compare.py).
DIVISION, TEMPO = 441, 10000
LOAD_PROGRAM = 14
LOAD_WALL_MS = 100.0
LOAD_RSS_BYTES = 40_000_000
SETS_WALL_MS = 150.0
SETS_RSS_BYTES = 50_000_000
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Samples", "examples")
GOAL = 10.0
QUALITIES = ["good", "fast", "best"]      # good first: the reference for the same-music checks
# program: (name, lowest key, highest key, strike interval in seconds)
PRESETS = {
    8: ("Celesta", 60, 108, 0.0057),
    9: ("Glockenspiel", 79, 108, 0.0114),
    10: ("Music Box", 60, 96, 0.0038),
    14: ("Tubular Bells", 55, 84, 0.0317),
    112: ("Tinkle Bell", 60, 108, 0.0025),
}
MIX_CHANNELS = 3
STRIKE_SECONDS, QUICK_STRIKE_SECONDS = 20.0, 8.0
HOLD_MIN, HOLD_SPAN = 0.5, 1.5
RELEASE_GAP = 0.05
# bellkeys ends a release at -90 dB, reached at 90/96 of the time FluidSynth's release takes to
# fall 96 dB (docs/design/soundfonts.md): the share of FluidSynth's note-seconds it is credited.
BELLKEYS_SHARE = 90 / 96


# --- running and timing ------------------------------------------------------------------------

def launch(command, output, ok=(0,)):
    """Runs `command` from load-instrument.py's small launcher, its output to the file `output`:
    (wall s, CPU s, peak RSS bytes, output text). An exit status outside `ok` stops the script."""
    program = shutil.which(command[0]) or command[0]
    report = subprocess.run([sys.executable, "-I", "-S", "-c", load_instrument.LAUNCHER, output, program] + command[1:],
                            stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if report.returncode != 0:
        sys.exit(f"the launcher failed on {' '.join(command)}: {report.stderr.strip()[-500:]}")
    wall, cpu, peak, status = json.loads(report.stdout)
    with open(output, errors="replace") as f:
        text = f.read()
    if status not in ok:
        sys.exit(f"failed (exit status {status}): {' '.join(command)}\n{text[-2000:]}")
    return wall, cpu, peak, text


def spread(values, scale=1.0, digits=0):
    return load_instrument.spread(values, scale, digits)


# --- part 1: load ------------------------------------------------------------------------------

def tiny_font(path):
    """A font of one 1 s sine at 44.1 kHz (bank 0, program 0)."""
    t = np.arange(RATE) / RATE
    frames = np.round(8000 * np.sin(2 * np.pi * 440 * t)).astype("<i2").tobytes()
    sf2.write(path, [sf2.Sample("sine", frames, RATE, root=69)], [sf2.Zone(0, (0, 127))], preset="sine")


def empty_midi(path, seconds=0.0, programs=()):
    """A MIDI file with no notes, `programs` (channel, program) at time 0, lasting `seconds`."""
    events = [(0, smf.message(0xC0 | c, p)) for c, p in programs]
    smf.write(path, events, division=DIVISION, tempo=TEMPO, end=round(seconds * RATE))


def part_load(bellkeys, font, work, runs):
    with open(font, "rb") as f:
        while f.read(1 << 22):
            pass
    empty = os.path.join(work, "empty.mid")
    empty_midi(empty)
    tiny = os.path.join(work, "one-sample.sf2")
    tiny_font(tiny)

    gm_sets = os.path.join(work, "gm-bells.json")
    with open(os.path.join(EXAMPLES, "gm-bells.json")) as f:
        text = f.read().replace("/usr/share/sounds/sf2/FluidR3_GM.sf2", os.path.abspath(font))
    with open(gm_sets, "w") as f:
        f.write(text)

    def fluidsynth(sf, *options):
        return ["fluidsynth", "-ni", "-q", "-R", "0", "-C", "0", *options, "-F", "/dev/null", "-T", "raw", sf, empty]

    commands = {
        "a": ("bellkeys check, Tubular Bells", [bellkeys, "check", "--map", font, "--program", str(LOAD_PROGRAM)]),
        "b": ("fluidsynth, whole font", fluidsynth(font)),
        "c": ("fluidsynth, dynamic loading", fluidsynth(font, "-o", "synth.dynamic-sample-loading=1")),
        "d": ("bellkeys render, whole font", [bellkeys, "render", empty, "-o", os.path.join(work, "empty.wav"),
                                               "--map", font, "--quiet"]),
        "e": ("fluidsynth, one-sample font", fluidsynth(tiny)),
        "f": ("bellkeys check, 5 GM bell sets", [bellkeys, "check", "--map", gm_sets]),
        "g": ("bellkeys check, 3 bundled sets", [bellkeys, "check", "--map", os.path.join(EXAMPLES, "bell-sets.json")]),
    }
    sf3 = "/usr/share/sounds/sf3/MuseScore_General_Lite.sf3"
    if os.path.isfile(sf3):
        commands["h"] = ("fluidsynth, whole SF3 font", fluidsynth(sf3))
        commands["i"] = ("bellkeys render, whole SF3 font", [bellkeys, "render", empty, "-o",
                                                             os.path.join(work, "empty.wav"), "--map", sf3, "--quiet"])
    results = {k: [] for k in commands}
    output = os.path.join(work, "load-output.txt")
    for round_ in range(runs + 1):
        for key, (_, command) in commands.items():
            # (A render of a file with no notes is written silent: exit status 3, as documented.)
            figures = launch(command, output, ok=(0, 3) if command[1] == "render" else (0,))
            if round_ > 0:
                results[key].append(figures)
    print(f"\nPart 1, load ({runs} runs of each, A B C D E F G after one warm-up each, page cache warm; "
          f"median (min to max))")
    print(f"{'':3}{'command':<31}{'wall ms':>24}{'CPU ms':>24}{'peak RSS MB':>24}")
    for key, (label, command) in commands.items():
        rows = results[key]
        print(f"{key:<3}{label:<31}{spread([r[0] for r in rows], 1000):>24}{spread([r[1] for r in rows], 1000):>24}"
              f"{spread([r[2] for r in rows], 1e-6, 1):>24}")
    own = [re.search(r"loaded in ([\d.]+) ms, peak memory ([\d.]+) MiB", r[3]) for r in results["a"]]
    if not all(own):
        sys.exit(f"bellkeys check printed no 'loaded in ... ms, peak memory ... MiB':\n{results['a'][0][3][:2000]}")
    print(f"   a: {' '.join(['bellkeys'] + commands['a'][1][1:])}; check's own figures: loaded in "
          f"{spread([float(m.group(1)) for m in own], 1, 1)} ms, peak memory {spread([float(m.group(2)) for m in own], 1, 1)} MiB")
    print(f"   b: {' '.join(commands['b'][1])}")
    wall = statistics.median(r[0] for r in results["a"]) * 1000
    rss = statistics.median(r[2] for r in results["a"])
    fluid = statistics.median(r[2] for r in results["b"])
    reference = statistics.median(r[2] for r in results["e"])
    print(f"   b holds {(fluid - reference) / 1e6:.0f} MB more than e (FluidSynth with a one-sample font): "
          f"the font's {os.path.getsize(font) / 1e6:.0f} MB file, loaded")
    verdicts = [
        f"bellkeys Tubular Bells ready in {wall:.1f} ms whole process (median), under {LOAD_WALL_MS:.0f} ms: "
        f"{'MET' if wall < LOAD_WALL_MS else 'MISSED'}",
        f"bellkeys peak resident memory {rss / 1e6:.1f} MB ({rss / 1048576:.1f} MiB), under {LOAD_RSS_BYTES / 1e6:.0f} MB: "
        f"{'MET' if rss < LOAD_RSS_BYTES else 'MISSED'}",
    ]
    sets_wall = statistics.median(r[0] for r in results["f"]) * 1000
    sets_rss = statistics.median(r[2] for r in results["f"])
    verdicts += [
        f"bellkeys five GM bell presets as five sets ready in {sets_wall:.1f} ms whole process (median), under "
        f"{SETS_WALL_MS:.0f} ms: {'MET' if sets_wall < SETS_WALL_MS else 'MISSED'}",
        f"bellkeys five sets' peak resident memory {sets_rss / 1e6:.1f} MB, under {SETS_RSS_BYTES / 1e6:.0f} MB: "
        f"{'MET' if sets_rss < SETS_RSS_BYTES else 'MISSED'}",
    ]
    whole, fluid_whole = (statistics.median(r[0] for r in results[k]) * 1000 for k in ("d", "b"))
    whole_rss = statistics.median(r[2] for r in results["d"])
    verdicts.append(
        f"bellkeys whole font ready for a General MIDI file in {whole:.0f} ms (median; peak RSS {whole_rss / 1e6:.0f} MB), "
        f"FluidSynth {fluid_whole:.0f} ms ({fluid / 1e6:.0f} MB): {'MET' if whole <= fluid_whole else 'MISSED'}")
    if "i" in results:
        sf3_whole, sf3_fluid = (statistics.median(r[0] for r in results[k]) * 1000 for k in ("i", "h"))
        verdicts.append(
            f"(stated) bellkeys whole SF3 font ready in {sf3_whole:.0f} ms, FluidSynth {sf3_fluid:.0f} ms; peak RSS "
            f"{statistics.median(r[2] for r in results['i']) / 1e6:.0f} MB and "
            f"{statistics.median(r[2] for r in results['h']) / 1e6:.0f} MB")
    summary = {k: (statistics.median(r[0] for r in results[k]) * 1000, statistics.median(r[1] for r in results[k]) * 1000,
                   statistics.median(r[2] for r in results[k]) / 1e6) for k in commands}
    return {"labels": {k: v[0] for k, v in commands.items()}, "medians": summary, "verdicts": verdicts}


# --- part 2: workloads -------------------------------------------------------------------------

def stride_for(n):
    return next(s for s in (7, 5, 11, 13, 17, 3) if math.gcd(s, n) == 1)


def preset_notes(program, seconds, channels, rate_scale=1.0):
    """[(start s, key, velocity, hold s, channel)] of one preset's dense workload (see the
    docstring), `channels` taking turns a round of the range each."""
    _, low, high, interval = PRESETS[program]
    keys = list(range(low, high + 1))
    stride = stride_for(len(keys))
    step = interval * rate_scale
    notes = []
    for i in range(int(seconds / step)):
        hold = HOLD_MIN + HOLD_SPAN * ((i * 0.6180339887498949) % 1.0)
        notes.append((i * step, keys[(i * stride) % len(keys)], 30 + (i * 37) % 98, hold,
                      channels[(i // len(keys)) % len(channels)]))
    return notes


def shorten_holds(notes):
    """Holds each note at most until RELEASE_GAP before its key is struck again on its channel.
    Returns (notes, how many were shortened)."""
    following, out, shortened = {}, [], 0
    for start, key, velocity, hold, channel in sorted(notes, reverse=True):
        again = following.get((key, channel))
        if again is not None and start + hold > again - RELEASE_GAP:
            hold = again - RELEASE_GAP - start
            shortened += 1
            assert hold > 0.01, "a key struck again on its channel within 60 ms"
        following[(key, channel)] = start
        out.append((start, key, velocity, hold, channel))
    return sorted(out), shortened


def frames(seconds):
    return round(seconds * RATE)


def write_workload_midi(path, notes, programs):
    """Program changes (channel, program) at time 0, then the notes; one tick is one frame."""
    events = [(0, 0, smf.message(0xC0 | c, p)) for c, p in programs]
    for start, key, velocity, hold, channel in notes:
        events.append((frames(start), 2, smf.message(0x90 | channel, key, velocity)))
        events.append((frames(start + hold), 1, smf.message(0x80 | channel, key, 0)))
    events.sort(key=lambda e: (e[0], e[1]))
    smf.write(path, [(tick, data) for tick, _, data in events], division=DIVISION, tempo=TEMPO)


def workloads(quick):
    """{name: (notes, [(channel, program)], {program: channels}, holds shortened)}."""
    seconds = QUICK_STRIKE_SECONDS if quick else STRIKE_SECONDS
    loads = {}
    for program, (name, *_ ) in PRESETS.items():
        notes, shortened = shorten_holds(preset_notes(program, seconds, peers.CHANNELS))
        loads[name] = (notes, [(c, program) for c in peers.CHANNELS], {program: peers.CHANNELS}, shortened)
    mix, programs, channels_of = [], [], {}
    for index, program in enumerate(PRESETS):
        channels = peers.CHANNELS[MIX_CHANNELS * index:MIX_CHANNELS * (index + 1)]
        channels_of[program] = channels
        programs += [(c, program) for c in channels]
        mix += preset_notes(program, seconds, channels, rate_scale=len(PRESETS))
    mix, shortened = shorten_holds(mix)
    loads["mix of five"] = (mix, programs, channels_of, shortened)
    return loads


# --- FluidSynth's voices, through libfluidsynth ------------------------------------------------

def fluidsynth_library():
    name = ctypes.util.find_library("fluidsynth") or "libfluidsynth.so.3"
    lib = ctypes.CDLL(name)
    p, i, d, s = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_char_p
    for function, restype, argtypes in (
            ("new_fluid_settings", p, []), ("delete_fluid_settings", None, [p]),
            ("fluid_settings_setint", i, [p, s, i]), ("fluid_settings_setnum", i, [p, s, d]),
            ("new_fluid_synth", p, [p]), ("delete_fluid_synth", None, [p]),
            ("fluid_synth_sfload", i, [p, s, i]), ("fluid_synth_program_change", i, [p, i, i]),
            ("fluid_synth_noteon", i, [p, i, i, i]), ("fluid_synth_noteoff", i, [p, i, i]),
            ("fluid_synth_get_active_voice_count", i, [p]),
            ("fluid_synth_write_float", i, [p, i, p, i, i, p, i, i])):
        f = getattr(lib, function)
        f.restype, f.argtypes = restype, argtypes
    return lib


def fluidsynth_voices(lib, font, notes, programs):
    """Plays `notes` through libfluidsynth as the fluidsynth contender's settings have it, in
    64-frame blocks (events at the start of their block), reading the active voice count after
    every block. Returns voice-seconds, the most voices at once, voices per note, and when the
    last voice ended (s)."""
    settings = lib.new_fluid_settings()
    lib.fluid_settings_setnum(settings, b"synth.sample-rate", float(RATE))
    lib.fluid_settings_setint(settings, b"synth.reverb.active", 0)
    lib.fluid_settings_setint(settings, b"synth.chorus.active", 0)
    lib.fluid_settings_setint(settings, b"synth.polyphony", 65535)
    lib.fluid_settings_setint(settings, b"synth.cpu-cores", 1)
    synth = lib.new_fluid_synth(settings)
    try:
        if lib.fluid_synth_sfload(synth, font.encode(), 1) < 0:
            sys.exit(f"libfluidsynth cannot load {font}")
        for channel, program in programs:
            lib.fluid_synth_program_change(synth, channel, program)
        events = []
        for start, key, velocity, hold, channel in notes:
            events.append((frames(start) // BLOCK, 1, channel, key, velocity))
            events.append((frames(start + hold) // BLOCK, 0, channel, key, 0))
        events.sort()
        buffer = (ctypes.c_float * (2 * BLOCK))()
        address = ctypes.addressof(buffer)
        count = lib.fluid_synth_get_active_voice_count
        voice_blocks, peak, started, block, index = 0, 0, 0, 0, 0
        while True:
            while index < len(events) and events[index][0] <= block:
                _, on, channel, key, velocity = events[index]
                if on:
                    before = count(synth)
                    lib.fluid_synth_noteon(synth, channel, key, velocity)
                    started += count(synth) - before
                else:
                    lib.fluid_synth_noteoff(synth, channel, key)
                index += 1
            lib.fluid_synth_write_float(synth, BLOCK, address, 0, 2, address, 1, 2)
            block += 1
            active = count(synth)
            voice_blocks += active
            peak = max(peak, active)
            if index == len(events) and active == 0:
                break
    finally:
        lib.delete_fluid_synth(synth)
        lib.delete_fluid_settings(settings)
    return {"voice_seconds": voice_blocks * BLOCK / RATE, "peak": peak, "per_note": started / len(notes),
            "end": block * BLOCK / RATE}


def bellkeys_voices_per_note(bellkeys, font, work):
    """{program: the most voices bellkeys starts for one note}, from single notes at the bottom,
    middle and top of each range (render without --quiet: "1 notes, N voices at most")."""
    found = {}
    for program, (_, low, high, _) in PRESETS.items():
        most = 0
        for key in (low, (low + high) // 2, high):
            midi = os.path.join(work, "one-note.mid")
            smf.write(midi, [(0, smf.message(0x90, key, 100)), (RATE // 2, smf.message(0x80, key, 0))],
                      division=DIVISION, tempo=TEMPO)
            result = subprocess.run([bellkeys, "render", midi, "-o", os.path.join(work, "one-note.wav"), "--map", font,
                                     "--program", str(program), "--rate", str(RATE), "--format", "f32"],
                                    capture_output=True, text=True)
            found_voices = re.search(r"(\d+) voices at most", result.stdout)
            if result.returncode != 0 or not found_voices:
                sys.exit(f"bellkeys could not render one note of program {program}: {result.stderr.strip()[-500:]}")
            most = max(most, int(found_voices.group(1)))
        found[program] = most
    return found


# --- part 2: commands, renders and checks --------------------------------------------------------

def fluidsynth_render(font, midi, out, polyphony):
    return ["fluidsynth", "-ni", "-q", "-F", out, "-T", "wav", "-O", "float", "-r", str(RATE), "-R", "0", "-C", "0",
            "-o", f"synth.polyphony={min(65535, polyphony)}", "-o", "synth.cpu-cores=1", font, midi]


def bellkeys_render(bellkeys, font, midi, out, program, quality, quiet=True):
    return [bellkeys, "render", midi, "-o", out, "--map", font, "--program", str(program), "--bank", "0",
            "--rate", str(RATE), "--format", "f32", "--quality", quality, "--polyphony", "65536"] + (["--quiet"] if quiet else [])


def read_mono(paths):
    """The mono mix of one render, or of several summed (zero-padded to the longest)."""
    parts = [bells.read_float_wav(p, RATE).astype(np.float64).mean(axis=1) for p in paths]
    out = np.zeros(max(len(p) for p in parts))
    for p in parts:
        out[:len(p)] += p
    return out


def envelope(x, window=0.05):
    n = int(RATE * window)
    usable = len(x) // n * n
    return np.sqrt(np.mean(x[:usable].reshape(-1, n) ** 2, axis=1))


def correlation(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    if np.std(a) == 0 or np.std(b) == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def part_throughput(bellkeys, font, work, runs, quick):
    lib = fluidsynth_library()
    loads = workloads(quick)
    per_note_bk = bellkeys_voices_per_note(bellkeys, font, work)
    contenders = [f"bellkeys-{q}" for q in QUALITIES] + ["fluidsynth"]
    problems = []
    print("\nPart 2, throughput. bellkeys' voices for one note (single notes at the bottom, middle and top of each "
          "range): " + ", ".join(f"{PRESETS[p][0]} {n}" for p, n in per_note_bk.items()))

    # Each contender's cost of a silent file: a + b x rendered seconds (peers.py's baseline), per
    # bellkeys process (preset and quality) and for FluidSynth (which loads the whole font anyway).
    print("silent files (5 s, 25 s) for the 'mixing only' figures ...", flush=True)
    baseline = {}
    output = os.path.join(work, "render-output.txt")
    silent_jobs = [("fluidsynth", None)] + [(f"bellkeys-{q}", p) for q in QUALITIES for p in PRESETS]
    for name, program in silent_jobs:
        points = []
        for seconds in (5.0, 25.0):
            midi = os.path.join(work, f"silent-{seconds:.0f}.mid")
            empty_midi(midi, seconds, [(c, program or 0) for c in peers.CHANNELS])
            out = os.path.join(work, "silent.wav")
            if name == "fluidsynth":
                command = fluidsynth_render(font, midi, out, 256)
            else:
                command = bellkeys_render(bellkeys, font, midi, out, program, name.split("-")[1])
            # bellkeys exits 3 when the file it wrote is silent because no note struck a bell.
            cpus = [launch(command, output, ok=(0, 3))[1] for _ in range(max(3, runs))]
            points.append((len(bells.read_float_wav(out, RATE)) / RATE, statistics.median(cpus)))
        (s0, c0), (s1, c1) = points
        slope = (c1 - c0) / (s1 - s0)
        baseline[(name, program)] = (c0 - slope * s0, slope)

    results = {}
    for load, (notes, programs, channels_of, shortened) in loads.items():
        midi = os.path.join(work, f"{load.replace(' ', '-').lower()}.mid")
        write_workload_midi(midi, notes, programs)
        # bellkeys plays one preset a process: on the mix, one process per preset, each on a file
        # of that preset's notes alone.
        parts = {}
        for program, channels in channels_of.items():
            if len(channels_of) == 1:
                parts[program] = midi
            else:
                parts[program] = midi.replace(".mid", f"-{program}.mid")
                write_workload_midi(parts[program], [n for n in notes if n[4] in channels],
                                    [(c, p) for c, p in programs if p == program])
        probe = fluidsynth_voices(lib, font, notes, programs)
        notes_fs = probe["voice_seconds"] / probe["per_note"]
        polyphony = max(256, probe["peak"] + 16)
        outs = {}
        commands = {}
        for name in contenders:
            if name == "fluidsynth":
                outs[name] = [os.path.join(work, f"{os.path.basename(midi)[:-4]}-fluidsynth.wav")]
                commands[name] = [fluidsynth_render(font, midi, outs[name][0], polyphony)]
            else:
                quality = name.split("-")[1]
                outs[name] = [os.path.join(work, f"{os.path.basename(midi)[:-4]}-{name}-{p}.wav") for p in parts]
                commands[name] = [bellkeys_render(bellkeys, font, parts[p], o, p, quality) for p, o in zip(parts, outs[name])]
        # One untimed bellkeys-good render per process, without --quiet: what bellkeys says of it.
        stats = []
        for program, path in parts.items():
            text = launch(bellkeys_render(bellkeys, font, path, os.path.join(work, "stats.wav"), program, "good", quiet=False),
                          output)[3]
            found = re.search(r"(\d+) notes, (\d+) voices at most, (\d+) stolen.*?limiter active ([\d.]+) ms, (\d+) samples clipped",
                              text, re.S)
            if not found:
                sys.exit(f"bellkeys render printed no statistics:\n{text[-1000:]}")
            stats.append(tuple(float(g) for g in found.groups()))
        print(f"{load}: {len(notes)} notes over {notes[-1][0]:.1f} s ({shortened} holds shortened); FluidSynth (probe): "
              f"{probe['voice_seconds'] / probe['end']:.0f} voices on average, {probe['peak']} at most (polyphony {polyphony}), "
              f"{probe['per_note']:.2f} a note, last ends at {probe['end']:.2f} s; bellkeys-good: "
              f"{'+'.join(f'{s[1]:.0f}' for s in stats)} voices at most, {sum(s[2] for s in stats):.0f} stolen, "
              f"limiter active {max(s[3] for s in stats) / 1000:.2f} s", flush=True)
        timed = {n: [] for n in contenders}
        for _ in range(runs):
            for name in contenders:
                wall = cpu = 0.0
                for command in commands[name]:
                    figures = launch(command, output)
                    wall, cpu = wall + figures[0], cpu + figures[1]
                timed[name].append((wall, cpu))
        # The same music.
        reference = None
        for name in contenders:
            x = read_mono(outs[name])
            seconds = len(x) / RATE
            level = math.sqrt(float(np.mean(x ** 2)))
            if level < 1e-5:
                problems.append(f"{name} rendered silence for {load}")
                continue
            env = envelope(x)
            if reference is None:
                reference = (name, env, level, seconds)
            ref_name, ref_env, ref_level, _ = reference
            r = correlation(ref_env, env)
            gain = peers.OUTPUT_GAIN_DB.get(name.split("-")[0], 0) - peers.OUTPUT_GAIN_DB.get(ref_name.split("-")[0], 0)
            difference = 20 * math.log10(level / ref_level) - gain
            end = probe["end"]
            low, high = (end, end + 2.5) if name == "fluidsynth" else (0.85 * end, end + 0.5)
            checks = ((not low <= seconds <= high, f"lasts {seconds:.2f} s, not {low:.2f} to {high:.2f} s"),
                      (abs(difference) > 6, f"is {difference:+.1f} dB from {ref_name}"),
                      (r < 0.8, f"has a loudness envelope correlating at only {r:.2f} with {ref_name}'s"))
            bad = [text for failed, text in checks if failed]
            if bad:
                problems.append(f"{name}'s render of {load} is not the same music: it " + "; ".join(bad))
            cpu = [t[1] for t in timed[name]]
            c = statistics.median(cpu)
            if name == "fluidsynth":
                a, b = baseline[("fluidsynth", None)]
                fixed = a + b * seconds
                credited, per_note = notes_fs, probe["per_note"]
            else:
                fixed = 0.0
                for program, path in zip(parts, outs[name]):
                    a, b = baseline[(name, program)]
                    fixed += a + b * len(bells.read_float_wav(path, RATE)) / RATE
                credited, per_note = notes_fs * BELLKEYS_SHARE, max(per_note_bk[p] for p in parts)
            mixing = c - fixed
            results[(load, name)] = {
                "cpu": cpu, "seconds": seconds, "notes": credited / probe["end"], "per_note": per_note,
                "whole": credited / c, "mixing": credited / mixing if mixing > 0.25 * c else float("nan"),
                "r": r, "db": difference}
    return loads, results, contenders, problems, per_note_bk


def report_throughput(loads, results, contenders, runs):
    """The full table; returns the compact summary's lines."""
    def figure(x):
        return f"{x:,.0f}" if x == x else "-"

    def times(x):
        return f"{x:.1f}x" if x == x else "-"

    def ratio(a, b):
        return a / b if a == a and b == b and b > 0 else float("nan")

    print(f"\nThroughput: notes per core in real time (note-seconds per CPU second), whole process / mixing only; "
          f"CPU s median (min to max) of {runs} run{'s' if runs != 1 else ''}; r and dB against bellkeys-good")
    print(f"{'workload':<15}{'contender':<15}{'audio s':>8}{'notes':>7}{'CPU s':>24}{'notes/core':>18}{'voices/core':>18}"
          f"{'x FluidSynth, notes':>22}{'per voice':>16}{'r':>7}{'dB':>6}")
    summary = []
    for load in loads:
        fs = results.get((load, "fluidsynth"))
        cells, meeting, judged = [], [], 0
        for name in contenders:
            row = results.get((load, name))
            if not row:
                continue
            line = (f"{load:<15}{name:<15}{row['seconds']:>8.1f}{row['notes']:>7.0f}{spread(row['cpu'], 1, 2):>24}"
                    f"{figure(row['whole']) + ' / ' + figure(row['mixing']):>18}"
                    f"{figure(row['whole'] * row['per_note']) + ' / ' + figure(row['mixing'] * row['per_note']):>18}")
            if name != "fluidsynth" and fs:
                rw, rm = ratio(row["whole"], fs["whole"]), ratio(row["mixing"], fs["mixing"])
                vw, vm = rw * row["per_note"] / fs["per_note"], rm * row["per_note"] / fs["per_note"]
                line += f"{times(rw) + ' / ' + times(rm):>22}{times(vw) + ' / ' + times(vm):>16}"
                value, mark = (rm, "") if rm == rm else (rw, "*")
                judged += 1
                if value >= GOAL:
                    meeting.append(name.split("-")[1])
                cells.append(f"{figure(row['mixing'] if rm == rm else row['whole']) + mark} ({times(value)})")
            else:
                line += f"{'':>22}{'':>16}"
            line += f"{row['r']:>7.3f}{row['db']:>+6.1f}"
            print(line)
        if fs:
            verdict = "yes" if len(meeting) == judged else ("+".join(meeting) + " only" if meeting else "no")
            fluid = figure(fs["mixing"]) if fs["mixing"] == fs["mixing"] else figure(fs["whole"]) + "*"
            summary.append(f"{load:<15}{fluid:>11}" + "".join(f"{c:>18}" for c in cells) + f"{verdict:>11}")
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, 8 s of strikes (a few minutes)")
    parser.add_argument("--runs", type=int, help="timed runs of each command (default: load 7, renders 3; --quick 3 and 1)")
    parser.add_argument("--keep", metavar="DIR", help="keep the MIDI files and renders in DIR")
    parser.add_argument("--font", default=FONT, help=f"the SoundFont (default {FONT})")
    parser.add_argument("--skip-load", action="store_true", help="part 2 only")
    parser.add_argument("--skip-throughput", action="store_true", help="part 1 only")
    args = parser.parse_args()
    bellkeys = os.path.abspath(os.environ.get("BELLKEYS_BIN") or os.path.join(ROOT, ".build", "release", "bellkeys"))
    if not os.access(bellkeys, os.X_OK):
        sys.exit(f"no bellkeys at {bellkeys}: swift build -c release --product bellkeys, or set BELLKEYS_BIN")
    if not shutil.which("fluidsynth"):
        sys.exit("no fluidsynth: sudo apt-get install fluidsynth")
    font = os.path.abspath(args.font)
    if not os.path.exists(font):
        sys.exit(f"no font at {font}: sudo apt-get install fluid-soundfont-gm")
    load_runs = args.runs or (3 if args.quick else 7)
    render_runs = args.runs or (1 if args.quick else 3)
    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
    else:
        work = tempfile.mkdtemp(prefix="bellkeys-soundfont-")
    version = subprocess.run(["fluidsynth", "--version"], capture_output=True, text=True).stdout.splitlines()
    print(f"bellkeys: {bellkeys}\n{version[0] if version else 'fluidsynth'}; font: {font}")
    try:
        load = None if args.skip_load else part_load(bellkeys, font, work, load_runs)
        problems, verdicts = [], []
        if not args.skip_throughput:
            loads, results, contenders, problems, _ = part_throughput(bellkeys, font, work, render_runs, args.quick)
            verdicts = report_throughput(loads, results, contenders, render_runs)
        print("\nSummary")
        if load:
            labels, medians = load["labels"], load["medians"]
            print(f"  {'load, medians':<34}{'wall ms':>9}{'CPU ms':>9}{'peak RSS MB':>13}")
            for k, (w, c, m) in medians.items():
                print(f"  {k} {labels[k]:<32}{w:>9.0f}{c:>9.0f}{m:>13.1f}")
            for line in load["verdicts"]:
                print("  " + line)
        if verdicts:
            print(f"  notes per core, mixing only (* whole process), and x FluidSynth; 10x: at least {GOAL:.0f}x FluidSynth "
                  f"at every quality")
            print(f"  {'workload':<15}{'FluidSynth':>11}" + "".join(f"{'bellkeys ' + q:>18}" for q in QUALITIES) + f"{'10x':>11}")
            for line in verdicts:
                print("  " + line)
        if problems:
            print("\nThe renders do not agree, or one failed:")
            for line in problems:
                print("  " + line)
            return 1
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
