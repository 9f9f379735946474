#!/usr/bin/env python3
"""Transposition cleanliness (issue 26): a looped sine played at other keys, against FluidSynth.

    python3 Benchmarks/transposition.py                 (bellkeys from .build/release, if built)
    BELLKEYS_BIN=/path/to/bellkeys python3 Benchmarks/transposition.py
    python3 Benchmarks/transposition.py --keep DIR      (keep the sample, fonts, MIDI and renders)

The issue's figure: "A looped 4 kHz sine (48 kHz, root key 60) played at keys 60, 67, 72, 79,
55, 48, 36 and 61; per note, over 32,768 samples from 0.3 s after its start, with a Blackman
window, the power of everything outside +-30 Hz of the expected sine relative to the sine."
And: "Transposed above the output's Nyquist frequency (the same sine at key 96), the sine is
attenuated by at least 60 dB, not folded back."

The sample: 48,000 frames of a 4 kHz sine at 48 kHz (4,000 whole cycles, so the loop over the
whole sample, 0..47999, is seamless), 16-bit mono, peak 16423 (-6 dBFS). FluidSynth gets it as
a SoundFont (one zone over every key, root key 60, sample modes 1, loop over the whole sample),
bellkeys as an SFZ (`<region> sample=sine4k.wav pitch_keycenter=60 loop_mode=loop_continuous
loop_start=0 loop_end=47999 ampeg_release=0.01`). Each key is its own MIDI file: the note at
time 0, velocity 127, channel 1, held 1.5 s.

FluidSynth 2.3.1 has no setting for its interpolation (`-o help` lists none; there is no
synth.interpolation): it is chosen by the shell command `interp N` (0 none, 1 linear, 4 its
default 4-point, 7 its 7-point), given in a command file with `-f`, which fluidsynth runs before
it fast-renders. Reverb and chorus are off; the output is 32-bit float (`-O float`: FluidSynth
dithers 16-bit output, which would add its own floor), gain 1 (`-g 1`). FluidSynth's per-voice
low-pass filter cannot be switched off: with the SoundFont's defaults (initialFilterFc 13500
cents, Q 0 cB) and its velocity-to-cutoff modulator at velocity 127 (-18.75 cents) it is a
2-pole low-pass at 19.7 kHz, Q 0.707 (fluid_iir_filter.c). The figures are measured as
FluidSynth plays, with that filter. It is why 4-point and 7-point come out 0.05 to 0.1 dB lower
than the issue's -54.5 and -53.6: a numpy model of FluidSynth's interpolators (256-row
coefficient tables, 32.32 phase) gives -54.54 and -53.62 without the filter and -54.60 and
-53.67 with it, the measured figures (2026-11-26); none and linear match the issue to 0.05 dB
either way.

The analysis window starts 0.3 s (14,400 frames) after the note's first non-zero output frame,
for both renderers. The expected frequency is 4000 x 2^((key-60)/12). Key 96 (32 kHz, above the
24 kHz Nyquist frequency): the windowed power of the whole output relative to the same
renderer's at key 60; -60 dB or lower is "attenuated, not folded back".

The bellkeys contender (`bellkeys_render`) runs, for each --quality level (fast, good, best):

    $BELLKEYS_BIN render --map sine4k.sfz --quality Q --rate 48000 --format f32 --quiet -o OUT.wav IN.mid

and is left out, with a message saying why, when that fails (before pitched playback and SFZ
maps land, bellkeys refuses --quality). Needs numpy and Debian's fluidsynth.
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tools", "python"))
import bells  # noqa: E402  (WAV files in and out)
from processes import error_line  # noqa: E402
import sf2  # noqa: E402  (the SoundFont writer)
import smf  # noqa: E402  (the MIDI file writer)

RATE = 48000
SINE_HZ = 4000.0
SAMPLE_FRAMES = 48000
PEAK = round(32767 * 10 ** (-6 / 20))
ROOT_KEY = 60
KEYS = [60, 67, 72, 79, 55, 48, 36, 61]
ABOVE_NYQUIST_KEY = 96
ABOVE_NYQUIST_LIMIT_DB = -60.0
WINDOW = 32768
DELAY_SECONDS = 0.3
BAND_HZ = 30.0
HOLD_SECONDS = 1.5
FLUIDSYNTH_LEVELS = {"none": 0, "linear": 1, "4-point (default)": 4, "7-point": 7}
BELLKEYS_LEVELS = ["fast", "good", "best"]
# The issue's FluidSynth figures, worst note (dB), for the comparison line.
ISSUE_FLUIDSYNTH = {"none": -16.4, "linear": -38.1, "4-point (default)": -54.5, "7-point": -53.6}
def expected_hz(key):
    return SINE_HZ * 2 ** ((key - ROOT_KEY) / 12)


def write_inputs(work):
    """The sine (WAV), its SoundFont and SFZ, and one MIDI file per key. Returns (sf2, sfz, {key: midi})."""
    n = np.arange(SAMPLE_FRAMES)
    sine = np.round(PEAK * np.sin(2 * np.pi * SINE_HZ * n / RATE)).astype("<i2")
    wav = os.path.join(work, "sine4k.wav")
    bells.write_wav(wav, sine, RATE)
    font = os.path.join(work, "sine4k.sf2")
    sf2.write(font, [sf2.Sample("sine4k", sine.tobytes(), RATE, root=ROOT_KEY, loop=(0, SAMPLE_FRAMES))],
              [sf2.Zone(0, (0, 127), root=ROOT_KEY, loop_mode=1)], preset="sine 4 kHz", instrument="sine")
    sfz = os.path.join(work, "sine4k.sfz")
    with open(sfz, "w") as f:
        f.write(f"<region> sample=sine4k.wav pitch_keycenter={ROOT_KEY} loop_mode=loop_continuous "
                f"loop_start=0 loop_end={SAMPLE_FRAMES - 1} ampeg_release=0.01\n")
    midis = {}
    for key in KEYS + [ABOVE_NYQUIST_KEY]:
        # 24,000 ticks per quarter at 120 bpm: one tick is one frame at 48 kHz.
        midis[key] = os.path.join(work, f"key{key}.mid")
        smf.write(midis[key], [(0, smf.message(0x90, key, 127)),
                               (round(HOLD_SECONDS * RATE), smf.message(0x80, key, 0))], division=24000)
    return font, sfz, midis


def fluidsynth_render(font, midi, out, level):
    """FluidSynth 2.3.1 at interpolation `level` (0, 1, 4, 7); True when it wrote `out`."""
    commands = out + ".cmd"
    with open(commands, "w") as f:
        f.write(f"interp {level}\n")
    result = subprocess.run(["fluidsynth", "-ni", "-q", "-g", "1", "-r", str(RATE), "-o", "synth.reverb.active=0",
                             "-o", "synth.chorus.active=0", "-f", commands, "-T", "wav", "-O", "float",
                             "-F", out, font, midi], capture_output=True, text=True)
    if result.returncode != 0 or not os.path.exists(out):
        sys.exit(f"fluidsynth failed: {result.stderr.strip()}")


def bellkeys_command(bellkeys, sfz, midi, out, quality):
    """The bellkeys contender's command line: the SFZ map at --quality, 48 kHz, float output."""
    return [bellkeys, "render", "--map", sfz, "--quality", quality, "--rate", str(RATE), "--format", "f32",
            "--quiet", "-o", out, midi]


def bellkeys_render(bellkeys, sfz, midi, out, quality):
    """Renders with bellkeys; None when it wrote `out`, else why not (one line)."""
    command = bellkeys_command(bellkeys, sfz, midi, out, quality)
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except OSError as error:
        return str(error)
    if result.returncode != 0 or not os.path.exists(out):
        return f"exit status {result.returncode}: {error_line(result)}"
    return None


def read_mono(path):
    """The mean of the channels, float64."""
    return bells.read_float_wav(path, RATE).astype(np.float64).mean(axis=1)


def analysis_window(y):
    """The WINDOW frames from DELAY_SECONDS after the first non-zero frame."""
    sounding = np.flatnonzero(y)
    if not len(sounding):
        return None
    start = sounding[0] + round(DELAY_SECONDS * RATE)
    segment = y[start:start + WINDOW]
    return segment if len(segment) == WINDOW else None


def spectrum(segment):
    """(frequencies, power) of `segment` under a Blackman window."""
    power = np.abs(np.fft.rfft(segment * np.blackman(WINDOW))) ** 2
    return np.fft.rfftfreq(WINDOW, 1 / RATE), power


def outside_band_db(segment, key):
    """Power outside +-BAND_HZ of the expected sine, relative to the power inside, in dB."""
    frequencies, power = spectrum(segment)
    inside = np.abs(frequencies - expected_hz(key)) <= BAND_HZ
    return 10 * math.log10(power[~inside].sum() / power[inside].sum())


def level_db(segment, reference):
    """Windowed power of `segment` relative to `reference`'s, in dB."""
    return 10 * math.log10(spectrum(segment)[1].sum() / spectrum(reference)[1].sum())


def measure(renders):
    """{key: dB} from {key: path}, or a string saying why not."""
    segments = {}
    for key, path in renders.items():
        try:
            segment = analysis_window(read_mono(path))
        except AssertionError as error:
            return str(error)
        if segment is None:
            return f"the render of key {key} is silent or shorter than {DELAY_SECONDS} s + {WINDOW} frames"
        segments[key] = segment
    figures = {key: outside_band_db(segments[key], key) for key in KEYS}
    figures[ABOVE_NYQUIST_KEY] = level_db(segments[ABOVE_NYQUIST_KEY], segments[ROOT_KEY])
    return figures


def table_line(renderer, level, figures):
    cells = "".join(f"{figures[k]:>8.1f}" for k in KEYS)
    worst = max(figures[k] for k in KEYS)
    above = figures[ABOVE_NYQUIST_KEY]
    verdict = "attenuated" if above <= ABOVE_NYQUIST_LIMIT_DB else "folds back"
    return f"{renderer:<11}{level:<19}{cells}{worst:>8.1f}{above:>9.1f}  {verdict}"


def fluidsynth_contender(work, font, midis):
    """[(level, {key: dB})] for FluidSynth at each interpolation."""
    rows = []
    for level, number in FLUIDSYNTH_LEVELS.items():
        renders = {}
        for key, midi in midis.items():
            renders[key] = os.path.join(work, f"fluidsynth-interp{number}-key{key}.wav")
            fluidsynth_render(font, midi, renders[key], number)
        figures = measure(renders)
        if isinstance(figures, str):
            sys.exit(f"FluidSynth at interp {number}: {figures}")
        rows.append((level, figures))
    return rows


def bellkeys_contender(work, sfz, midis):
    """([(level, {key: dB})], why it was left out or None) for bellkeys at each --quality."""
    bellkeys = os.environ.get("BELLKEYS_BIN") or os.path.join(ROOT, ".build", "release", "bellkeys")
    if not os.access(bellkeys, os.X_OK):
        return [], f"{bellkeys} is not an executable (build it: swift build -c release, or set BELLKEYS_BIN)"
    rows = []
    for quality in BELLKEYS_LEVELS:
        renders = {}
        for key, midi in midis.items():
            renders[key] = os.path.join(work, f"bellkeys-{quality}-key{key}.wav")
            why = bellkeys_render(bellkeys, sfz, midi, renders[key], quality)
            if why:
                return rows, f"`{' '.join(bellkeys_command(bellkeys, sfz, midi, renders[key], quality))}` failed: {why}"
        figures = measure(renders)
        if isinstance(figures, str):
            return rows, f"bellkeys --quality {quality}: {figures}"
        rows.append((quality, figures))
    return rows, None


def main():
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    if not shutil.which("fluidsynth"):
        sys.exit("fluidsynth is missing: apt-get install fluidsynth")
    work = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="bellkeys-transposition-")
    os.makedirs(work, exist_ok=True)
    font, sfz, midis = write_inputs(work)
    print("transposition cleanliness (issue 26): power outside +-30 Hz of the expected sine relative to the sine, "
          "dB; key 96: whole output relative to key 60, dB")
    print(f"{'renderer':<11}{'level':<19}" + "".join(f"{'key ' + str(k):>8}" for k in KEYS) + f"{'worst':>8}{'key 96':>9}")
    for level, figures in fluidsynth_contender(work, font, midis):
        print(table_line("FluidSynth", level, figures), flush=True)
    rows, skipped = bellkeys_contender(work, sfz, midis)
    for level, figures in rows:
        print(table_line("bellkeys", level, figures), flush=True)
    if skipped:
        print(f"bellkeys: left out, {skipped}")
    print("the issue's FluidSynth 2.3.1 figures, worst note: "
          + ", ".join(f"{level} {value:.1f} dB" for level, value in ISSUE_FLUIDSYNTH.items()))
    if keep:
        print(f"files kept in {work}")
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
