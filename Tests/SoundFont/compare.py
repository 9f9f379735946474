#!/usr/bin/env python3
"""Note-by-note comparison of bellkeys against FluidSynth on SoundFont presets.

For each preset (bank 0: Celesta 8, Glockenspiel 9, Music Box 10, Tubular Bells 14,
Tinkle Bell 112 of FluidR3_GM.sf2) the script writes a Standard MIDI File (program
change at time 0, then one note at a time, held about 1 s, far enough apart that
FluidSynth has ended the previous voice), renders it with FluidSynth 2.3.1 and with
`bellkeys render`, and checks every note on the left and the right channel alone:

  onset     the lag that best aligns the note's first 2048 frames in the two renders
            (from the voice's start, or from 128 frames before FluidSynth's onset on
            a side where that comes later; cross-correlation, +-256 frames, parabolic
            refinement), after
            FluidSynth's latency: its `-F` renderer starts a voice late by a known
            amount (see fluid_start). Within 2 frames. Also printed: each render's
            first frame whose |x| > 0.1 x the note's peak, relative to the MIDI frame
            N. That crossing is not the test: on a sharp attack a 4 % difference in
            one interpolated frame (bellkeys' windowed sinc against FluidSynth's
            4-point) moves it by 3 frames, and FluidSynth fades a voice it has never
            used before in as (i/64)^2 over its first block, a recycled one as i/64.
  pitch     from 50 ms to 1 s after each render's own onset: Hann window, FFT
            zero-padded to 2^18, magnitude in dB (floor 60 dB under the peak) put on
            a log-frequency grid of 0.1 cent; the shift that best aligns the two
            spectra (cross-correlation, +-200 cents, parabolic refinement) must be
            within 1 cent. Bells are inharmonic, so all partials vote, not a "pitch".
  level     RMS over the first 200 ms. One gain offset for the whole run (median of
            all notes' dB differences) is taken out; each note within 1 dB.
  envelope  linear RMS in 10 ms steps from onset to note-off; Pearson r >= 0.98.
            (The windows of pitch, level, envelope and decay start at FluidSynth's
            first onset of either channel, and the candidate's at the same point of
            its note by the aligned lag: the threshold onsets are not compared.)
            (Pearson forgives a wrong decay rate: 20 dB/s too fast from 0.2 s gives r = 0.998.)
  decay     so also: level of the last 100 ms before note-off (or before FluidSynth's
            note falls 60 dB under its peak) minus the first 200 ms, within 1 dB.
  release   level 200-300 ms after note-off minus the 100 ms before it, within 1 dB
            (where FluidSynth's note still sounds then, 80 dB under its peak or louder).
  clicks    in each 10 ms frame of the held part (from 50 ms to note-off), peak / RMS of the
            second difference (a high-pass: a loop splice or step shows up as one
            spike against the frame's own HF level); bellkeys' worst frame must not
            exceed 2x FluidSynth's worst frame. Meant for looped presets.

Timing scheme: division 441 ticks per quarter, tempo 10000 us per quarter, so one
tick = 10000/441 us = 1/44100 s = exactly one frame at 44100 Hz. Notes start on
multiples of 28224 frames (0.64 s = lcm(64, 441) frames: a multiple of 64 and a
whole number of ms, which keeps FluidSynth's ms clock exact) and are held 44096
frames (689 blocks of 64, 0.99991 s).

Any other program of bank 0 plays seven keys across the keyboard, two at all four velocities
(`--presets melodic`: all 128); run 2001 (`drums`) plays every General MIDI drum note of the
standard kit through the whole font. Run 1014 plays Tubular Bells from C2 to C7 (its ends at all four velocities); run 1012 plays
Celesta with the pitch wheel moved before each note (RPN 0 setting 12 semitones for two of
them). Runs 1010 and 1011
are played on Music Box: 1010 with controller changes before its notes
(CC7, CC11, CC10), 1011 with keys struck again 0.64 s apart, before their note-offs, and the
sustain pedal down for two of them: FluidSynth lets go of a ringing voice when its key is
struck again (as a note-off would, so the pedal holds it). Without that rule in bellkeys, two
of 1011's notes fail (decay and release 12 dB off, level 2.4 dB).

Exit: 0 every note passes, 1 any fails, 2 cannot run (no fluidsynth, font, binary,
or a bellkeys without --program/--bank). After the notes, a map that names the
controller run's preset (else the first) and nothing else ({"soundfont": FONT, "bank": 0, "program": P}) must render the
same bytes as --map FONT --program P. --self-test compares FluidSynth with
itself (other gain) with errors planted on chosen notes, and exits 0 only when the
clean notes pass and every planted note fails on the planted check.
"""
import argparse, os, shutil, subprocess, sys, tempfile, time
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'Tools', 'python'))
import bells  # noqa: E402  (the float WAV reader)
import smf  # noqa: E402  (the Standard MIDI File writer)

RATE, BLOCK, GRID, HOLD = 44100, 64, 28224, 44096
ALIGN_LEN, ALIGN_REACH = 2048, 256
FONT = '/usr/share/sounds/sf2/FluidR3_GM.sf2'
GAIN = '1.0'
# program: (name, keys, keys that get all four velocities, spacing in GRID units).
# Spacing: FluidSynth ends the voice of a 1 s note at velocity 127 (the slowest key)
# after Celesta 4.6 s, Glockenspiel 9.1 s, Music Box 2.3 s, Tubular Bells 19.4 s,
# Tinkle Bell 3.2 s, Vibraphone 2.1 s in FluidR3_GM (2.5 s in TimGM6mb); MuseScore_General's Music Box and Tinkle Bell ring
# longer (releases of 3.3 and 3.9 s). Each spacing is longer, so every note starts in
# digital silence.
PRESETS = {
    8: ('Celesta', [55, 60, 67, 74, 84, 96, 108], (60, 84), 8),
    9: ('Glockenspiel', [72, 79, 84, 89, 96, 103, 108], (79, 96), 15),
    10: ('Music Box', [48, 55, 60, 67, 74, 86, 96], (60, 74), 7),
    11: ('Vibraphone', [53, 60, 65, 72, 77, 84, 89], (60, 77), 5),
    14: ('Tubular Bells', [55, 60, 65, 67, 72, 77], (60,), 31),
    112: ('Tinkle Bell', [48, 60, 67, 72, 79, 84, 96], (72, 84), 7),
    # Beyond the bells: presets whose MuseScore zones carry velocity and key modulators on the
    # filter (Crystal -3600 cents from velocity; Nylon Guitar -6000 and -3000 from velocity,
    # -1500 from the key). (Electric Piano 1, -4800 from velocity, passes but for its first
    # note, whichever it is: its attack is instant, and FluidSynth fades a voice slot it has
    # never used in over its first block (design/soundfonts.md); the bells' first notes pass.)
    98: ('Crystal', [48, 60, 67, 72, 79, 84, 96], (60, 84), 10),
    24: ('Nylon Guitar', [40, 48, 55, 60, 67, 76, 84], (48, 67), 4),
}
# Controllers through FluidSynth's default modulators: a run on Music Box (mono) whose notes
# each follow controller changes half a grid step before them (CC7 volume, CC11 expression,
# CC10 pan), on a key of its own: run number -> (program, [(key, velocity, [(cc, value)])]).
# CC10 stops at 96: at 127 bellkeys pans hard right as General MIDI asks, where FluidSynth's
# 127 is 492 of its 500 (the left side 38 dB down, not silent).
CONTROLLED = {
    1010: (10, [(60, 100, [(7, 127), (11, 127), (10, 64)]), (74, 100, [(7, 64)]), (60, 100, [(7, 20)]),
                (74, 100, [(7, 100), (11, 64)]), (60, 100, [(11, 20)]), (74, 100, [(11, 127), (10, 0)]),
                (60, 100, [(10, 32)]), (74, 100, [(10, 96)]), (60, 100, [(10, 64)])]),
}
PRESETS[1010] = ('Music Box CCs', [], (), 7)
# Keys struck again before their note-off (notes 0.64 s apart, held 1 s): FluidSynth lets go
# of the ringing voice at the new strike, as a note-off would, and the sustain pedal (CC64,
# down before the third note, up before the fourth) holds what it lets go of.
CONTROLLED[1011] = (10, [(60, 127, []), (60, 30, []), (60, 100, [(64, 127)]), (60, 64, []), (67, 30, [(64, 0)]),
                        (67, 127, []), (67, 30, [])])
PRESETS[1011] = ('Music Box again', [], (), 1)
# The pitch wheel on Celesta, its notes each bent before they start: the top and bottom of the
# default 2 semitones (FluidSynth's default modulator reaches 127/128 of the range: +198.4 and
# -198.4 cents), two points between, 12 semitones set by RPN 0 (-1,190.6 cents at the bottom),
# and back to the centre.
CONTROLLED[1012] = (8, [(60, 100, [('wheel', 16383)]), (72, 100, [('wheel', 0)]), (60, 100, [('wheel', 12288)]),
                        (72, 100, [('wheel', 4096)]),
                        (60, 100, [(101, 0), (100, 0), (6, 12), (38, 0), ('wheel', 0)]),
                        (72, 100, [('wheel', 15000)]), (60, 100, [('wheel', 8192)])])
PRESETS[1012] = ('Celesta wheel', [], (), 8)
# Tubular Bells across the keyboard, C2 to C7, the ends at all four velocities: TimGM6mb's closes a
# bright sample down with the modulation envelope on its filter, a different amount at every key.
CONTROLLED[1014] = (14, [(k, v, []) for k in (36, 48, 60, 72, 84, 96) for v in ((30, 64, 100, 127) if k in (36, 96) else (100,))])
PRESETS[1014] = ('Tubular Bells wide', [], (), 31)
# A General MIDI file through the whole font (bellkeys renders it with no --program): each note on
# a channel of its own, its bank select (CC0) and program change half a grid step before it, as
# FluidSynth chooses presets: channel 10 plays bank 128 (its first note on the kit it starts on,
# with no program change), a bank the font lacks (TimGM6mb has no bank 8) or a kit it lacks plays
# FluidSynth's substitute. run number -> [(channel, bank, program or None, key, velocity)]. A
# silent chord at frame 0 (channel 16, CC7 0) first uses 48 of FluidSynth's voice slots, which
# fade in over their first block the first time they play (design/soundfonts.md).
TOURS = {
    2000: [(0, 0, 8, 72, 100), (1, 0, 0, 60, 100), (2, 0, 4, 64, 64), (3, 0, 24, 55, 100), (4, 0, 40, 67, 100),
           (5, 0, 56, 65, 127), (6, 0, 73, 72, 100), (7, 8, 4, 60, 100), (9, 0, None, 38, 100), (9, 0, None, 42, 100),
           (9, 0, 25, 36, 127), (9, 0, 26, 40, 100), (10, 0, 19, 48, 100), (11, 0, 14, 60, 100)],
}
PRESETS[2000] = ('GM tour', [], (), 12)
# The standard kit (bank 128, program 0) through the whole font: every General MIDI drum note, 35
# to 81, on channel 10 at velocity 100, 7.68 s apart (a crash cymbal rings 6 s and more).
TOURS[2001] = [(9, 0, None, k, 100) for k in range(35, 82)]
PRESETS[2001] = ('Standard kit', [], (), 12)
# Any other melodic preset of bank 0 (`--presets melodic` runs all 128): seven keys across the
# keyboard, two of them at all four velocities, 6.4 s apart. A key outside the preset's range is
# silent in both renders, and passes as alike.
GENERIC_KEYS, GENERIC_MULTI, GENERIC_SPACING = [36, 48, 55, 60, 67, 76, 84], (48, 67), 10
WARM_UP_KEYS = range(36, 84, 2)
VELS = (100, 64, 127, 30)
ONSET_REL, ONSET_FRAMES, CENTS, DB, ENV_R, CLICK = 0.1, 2, 1.0, 1.0, 0.98, 2.0
PITCH_FROM, LEVEL_LEN, TAIL_LEN, STEP = 2205, 8820, 4410, 441     # 50, 200, 100, 10 ms
RELEASE_FROM = 8820                                                  # 200 ms after note-off


def program_of(run):
    """The program a run plays (a controller run plays a preset of its own; a tour, the whole
    font: None)."""
    return None if run in TOURS else CONTROLLED[run][0] if run in CONTROLLED else run


def notes_for(program):
    """[(frame N, key, velocity)] for one preset (or controller run)."""
    name, keys, multi, spacing = PRESETS[program]
    if program in TOURS:
        return [((1 + j * spacing) * GRID, k, v) for j, (_, _, _, k, v) in enumerate(TOURS[program])]
    if program in CONTROLLED:
        return [((1 + j * spacing) * GRID, k, v) for j, (k, v, _) in enumerate(CONTROLLED[program][1])]
    plan = []
    for i, key in enumerate(keys):
        plan += [(key, v) for v in (sorted(VELS) if key in multi else [VELS[i % 4]])]
    return [((1 + j * spacing) * GRID, k, v) for j, (k, v) in enumerate(plan)]


def write_smf(path, program, notes, bends=None, controls=None):
    """Format 0, one tick = one frame (Tools/python/smf.py). bends: {note index: 14-bit value};
    controls: {note index: [(controller, value)]}, sent in their order half a grid step before the
    note (controller 'wheel': the pitch wheel, 0...16383)."""
    events = [(0, smf.message(0xC0, program))]      # (tick, bytes), kept in order within a tick
    timed = []
    for i, (n, key, vel) in enumerate(notes):
        for j, (cc, value) in enumerate((controls or {}).get(i, [])):
            message = (smf.message(0xE0, value & 127, value >> 7) if cc == 'wheel'
                       else smf.message(0xB0, cc, value))
            timed.append((n - GRID // 2, 0, j, message))
        if bends and i in bends:
            b = bends[i]
            timed.append((n, 0, 0, smf.message(0xE0, b & 127, b >> 7)))
        timed.append((n, 1, 0, smf.message(0x90, key, vel)))
        timed.append((n + HOLD, -1, 0, smf.message(0x80, key, 64)))
    events += [(frame, msg) for frame, _, _, msg in sorted(timed)]
    smf.write(path, events, division=441, tempo=10000)


def write_tour(path, tour, notes):
    """A tour's file (TOURS): the silent warm-up chord on channel 16, then each note on its
    channel, its CC0 and program change half a grid step before it."""
    events = [(0, smf.message(0xBF, 7, 0)), (0, smf.message(0xCF, 48))]
    events += [(0, smf.message(0x9F, k, 100)) for k in WARM_UP_KEYS]
    events += [(GRID // 4, smf.message(0x8F, k, 0)) for k in WARM_UP_KEYS]
    for (channel, bank, program, _, _), (n, key, vel) in zip(tour, notes):
        if program is not None:
            events += [(n - GRID // 2, smf.message(0xB0 | channel, 0, bank)),
                       (n - GRID // 2, smf.message(0xC0 | channel, program))]
        events += [(n, smf.message(0x90 | channel, key, vel)), (n + HOLD, smf.message(0x80 | channel, key, 64))]
    smf.write(path, events, division=441, tempo=10000)


def fluid_start(n):
    """Frame where FluidSynth 2.3.1's fast renderer starts the voice of a note at frame n.
    Its player runs before each 64-frame block b with msec = int(1000*64b/rate) and plays
    events up to tick int(msec/dt + 0.5), dt = float32(tempo/division/1000); the voice
    sounds from the next block, its first frame 0 (attack from zero), the next not.
    Matches 13 measured notes, e.g. n=0 -> 64, 64 -> 192, 6400 -> 6401 -> 6528,
    2822400 -> 2822464: usually n + 128, n + 64 when n is a whole ms; GRID multiples
    below 517 x GRID (330 s) -> n + 64. (It also plays whole cents: fluid_ct2hz_real
    truncates, harmless here, every generator of these presets is in whole cents.)"""
    dt = float(np.float32(np.float32(10000) / np.float32(441) / np.float32(1000)))
    b = max(0, n // BLOCK - 2)
    while int(int(1000.0 * BLOCK * b / RATE) / dt + 0.5) < n:
        b += 1
    return (b + 1) * BLOCK


def read_wav(path):
    """(frames, 2) float32: a 32-bit float WAV at RATE (Tools/python/bells.py), mono doubled."""
    x = bells.read_float_wav(path, RATE)
    return np.repeat(x, 2, 1) if x.shape[1] == 1 else x[:, :2]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f'failed ({r.returncode}): {" ".join(cmd)}\n{r.stderr.strip()}')


def fluid_render(mid, wav, font, gain=GAIN, reverb=False):
    run(['fluidsynth', '-ni', '-q', '-g', gain, '-R', '1' if reverb else '0', '-C', '0', '-r', str(RATE),
         '-O', 'float', '-T', 'wav', '-F', wav, font, mid])


def bellkeys_render(binary, mid, wav, font, program, room=None):
    """The file through one preset (bank 0), or through the whole font (program None), 6 dB down
    (the candidate puts it back): a tour's kick drum at velocity 127 peaks near full scale, where
    bellkeys' limiter would hold it down and FluidSynth's float output does not. `room`: a
    --reverb preset."""
    chosen = ['--volume', '-6'] if program is None else ['--program', str(program), '--bank', '0']
    run([binary, 'render', mid, '-o', wav, '--map', font] + chosen + (['--reverb', room] if room else [])
        + ['--rate', str(RATE), '--format', 'f32', '--quiet'])


def beside(doc, name, write_font, body):
    """Runs a script beside this one that renders a font of its own with FluidSynth and
    bellkeys: its command line (--bellkeys, --keep DIR), a work folder (removed after unless
    kept), the font written there (`write_font(path)`), then `body(bellkeys, work, font)`, whose
    exit status it returns; 2 (said) when it cannot run."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[0])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--bellkeys', default=os.environ.get('BELLKEYS_BIN', os.path.join(repo, '.build/release/bellkeys')))
    ap.add_argument('--keep', metavar='DIR', help='keep the font, the MIDI files and the renders in DIR')
    args = ap.parse_args()
    if not shutil.which('fluidsynth') or not os.access(args.bellkeys, os.X_OK):
        print(f'{name}.py: needs fluidsynth and a release bellkeys (swift build -c release --product bellkeys)')
        return 2
    work = args.keep or tempfile.mkdtemp(prefix=f'bellkeys-{name}-')
    os.makedirs(work, exist_ok=True)
    try:
        font = os.path.join(work, f'{name}.sf2')
        write_font(font)
        return body(args.bellkeys, work, font)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def seg(x, a, b):
    """x[a:b] padded with zeros where it runs off either end."""
    out = np.zeros(b - a, np.float64)
    lo, hi = max(a, 0), min(b, len(x))
    if hi > lo:
        out[lo - a:hi - a] = x[lo:hi]
    return out


def onset(x, n):
    s = np.abs(seg(x, n - 256, n + RATE // 2))
    above = np.nonzero(s > ONSET_REL * s.max())[0]
    return n - 256 + int(above[0]) if len(above) else None


def log_spectrum(s):
    w = s * np.hanning(len(s))
    mag = np.abs(np.fft.rfft(w, 1 << 18))
    db = 20 * np.log10(mag + 1e-30)
    db = np.maximum(db - (db.max() - 60), 0)
    freqs = np.arange(len(mag)) * RATE / (1 << 18)
    grid = 40.0 * 2 ** (np.arange(int(1200 * np.log2(18000 / 40) * 10)) / 12000)
    return np.interp(grid, freqs, db)


def cents_shift(ref, test):
    """Cents by which `test` sits above `ref` (log-spectrum cross-correlation)."""
    a, b = log_spectrum(ref), log_spectrum(test)
    size = 1 << int(np.ceil(np.log2(2 * len(a))))
    xc = np.fft.irfft(np.conj(np.fft.rfft(a, size)) * np.fft.rfft(b, size), size)
    lags = np.r_[xc[size - 2000:], xc[:2001]]      # lags -200.0 .. +200.0 cents
    i = int(np.argmax(lags))
    if 0 < i < len(lags) - 1:
        y0, y1, y2 = lags[i - 1:i + 2]
        den = y0 - 2 * y1 + y2
        i = i + (0.5 * (y0 - y2) / den if den else 0)
    return (i - 2000) / 10.0


def align(ref, test):
    """Frames by which `test` lags `ref` (cross-correlation over +-ALIGN_REACH frames)."""
    size = 1 << int(np.ceil(np.log2(2 * len(ref))))
    xc = np.fft.irfft(np.conj(np.fft.rfft(ref, size)) * np.fft.rfft(test, size), size)
    lags = np.r_[xc[size - ALIGN_REACH:], xc[:ALIGN_REACH + 1]]
    i = int(np.argmax(lags))
    if 0 < i < len(lags) - 1:
        y0, y1, y2 = lags[i - 1:i + 2]
        den = y0 - 2 * y1 + y2
        i = i + (0.5 * (y0 - y2) / den if den else 0)
    return i - ALIGN_REACH


def rms(s):
    return float(np.sqrt(np.mean(np.square(s)))) if len(s) else 0.0


def click_score(s, floor):
    """Worst 10 ms frame's peak/RMS of the second difference (frames above floor)."""
    worst = 0.0
    for i in range(0, len(s) - STEP, STEP):
        f = s[i:i + STEP + 2]
        if rms(f) < floor:
            continue
        d2 = np.diff(f, 2)
        r = rms(d2)
        if r > 0:
            worst = max(worst, float(np.abs(d2).max() / r))
    return worst


def measure(fs, bk, notes, cand_lat):
    """Per note and channel: raw measurements (the level offset is applied later)."""
    rows = []
    for n, key, vel in notes:
        lat = fluid_start(n) - n
        chans = []
        # A channel a pan turns off in both renders (80 dB under the other channel) is alike;
        # FluidSynth's from its third block on: it ramps a voice's amplitude from what its slot last played
        # over its first block, so a hard-panned drum on a recycled slot leaks 30 dB down into the
        # other channel for 64 frames (TimGM6mb's Mute Triangle).
        side = lambda x, c, at: rms(seg(x[:, c], at, at + LEVEL_LEN))
        off = [all(side(x, c, at) <= 1e-4 * max(side(x, 0, at), side(x, 1, at))
                   for x, at in ((fs, fluid_start(n) + 2 * BLOCK), (bk, n))) for c in range(2)]
        # The windows of the measures below start at FluidSynth's first onset of either channel
        # (a voice starts on both at once), and the candidate's at the same point of its note,
        # found by the aligned lag, so that both measure the same stretch of sound: a threshold
        # onset moves with a low note's phase and with two layers' beating (Rhodes EP at C2
        # crosses 17 frames apart in the two renders; Polysynth's right side 270).
        starts = [o for o in (onset(fs[:, c], n) for c in range(2)) if o is not None]
        for c in range(2):
            a, b = fs[:, c], bk[:, c]
            oa, ob = onset(a, n), onset(b, n)
            if off[c] or oa is None or ob is None:
                chans.append(dict(silent=True, off=off[c], oa=oa, ob=ob))
                continue
            shown = (oa, ob)
            # Aligned from the voice's start, or from 128 frames before this side's own onset where
            # that comes later (a layer with a delay of its own on one side: TimGM6mb's Synth
            # Strings 2 starts its right side 0.1 s in; and any attack slower than 3 ms).
            at = max(fluid_start(n), oa - 128)
            lag = align(seg(a, at, at + ALIGN_LEN),
                        seg(b, at - fluid_start(n) + n + cand_lat(n), at - fluid_start(n) + n + cand_lat(n) + ALIGN_LEN))
            oa = min(starts)
            ob = oa - fluid_start(n) + n + cand_lat(n) + int(round(lag))
            peak = np.abs(seg(a, oa, oa + HOLD)).max()
            loud = np.nonzero(np.abs(seg(a, oa, oa + HOLD)) > 1e-3 * peak)[0]
            end = max(min(HOLD, int(loud[-1]) + 1), PITCH_FROM + 1024)
            cents = cents_shift(seg(a, oa + PITCH_FROM, oa + end), seg(b, ob + PITCH_FROM, ob + end))
            la, lb = rms(seg(a, oa, oa + LEVEL_LEN)), rms(seg(b, ob, ob + LEVEL_LEN))
            steps = HOLD // STEP
            ea = np.sqrt(np.mean(seg(a, oa, oa + steps * STEP).reshape(steps, STEP) ** 2, 1))
            eb = np.sqrt(np.mean(seg(b, ob, ob + steps * STEP).reshape(steps, STEP) ** 2, 1))
            r = float(np.corrcoef(ea, eb)[0, 1]) if ea.std() > 0 and eb.std() > 0 else 0.0
            ta, tb = rms(seg(a, oa + end - TAIL_LEN, oa + end)), rms(seg(b, ob + end - TAIL_LEN, ob + end))
            decay = 20 * np.log10(max(tb, 1e-20) / max(lb, 1e-20)) - 20 * np.log10(max(ta, 1e-20) / max(la, 1e-20))
            # (The held part only: up to each render's note-off, where the release's corner is
            # not a click. A slow attack's onset comes late, and oa + HOLD would run past it.)
            fa_off, fb_off = fluid_start(n + HOLD), n + HOLD + cand_lat(n + HOLD)
            ca = click_score(seg(a, oa + PITCH_FROM, min(oa + HOLD, fa_off)), 1e-3 * peak)
            cb = click_score(seg(b, ob + PITCH_FROM, min(ob + HOLD, fb_off)), 1e-3 * peak)
            pre = np.abs(seg(a, fluid_start(n) - 256, fluid_start(n))).max()
            # Release: the level 200-300 ms after note-off against the 100 ms before it.
            before_a, before_b = rms(seg(a, fa_off - TAIL_LEN, fa_off)), rms(seg(b, fb_off - TAIL_LEN, fb_off))
            after_a = rms(seg(a, fa_off + RELEASE_FROM, fa_off + RELEASE_FROM + TAIL_LEN))
            after_b = rms(seg(b, fb_off + RELEASE_FROM, fb_off + RELEASE_FROM + TAIL_LEN))
            release = None
            if before_a > 1e-3 * peak / np.sqrt(2) and after_a > 1e-4 * peak:
                release = (20 * np.log10(max(after_b, 1e-20) / max(before_b, 1e-20))
                           - 20 * np.log10(after_a / before_a))
            first = n - 256 + int(np.nonzero(seg(a, n - 256, n + RATE))[0][0])
            chans.append(dict(silent=False, oa=shown[0] - n, ob=shown[1] - n, don=lag,
                              cross=(shown[1] - n - cand_lat(n)) - (shown[0] - n - lat),
                              late=first - fluid_start(n), release=release, pre=pre / peak, cents=cents,
                              db=20 * np.log10(max(lb, 1e-20) / max(la, 1e-20)),
                              r=r, decay=decay, click=cb / ca if ca > 0 else 1.0))
        rows.append(dict(n=n, key=key, vel=vel, lat=lat, ch=chans))
    return rows


def judge(rows, offset):
    """Fill in verdicts: the list of failed checks (with channel) per note."""
    for row in rows:
        fails = []
        for c, m in zip('LR', row['ch']):
            if m['silent']:
                if not m['off']:
                    fails.append(f'silent({c})')
                continue
            m['ddb'] = m['db'] - offset
            for name, bad in (('onset', abs(m['don']) > ONSET_FRAMES), ('pitch', abs(m['cents']) > CENTS),
                              ('level', abs(m['ddb']) > DB), ('envelope', m['r'] < ENV_R), ('decay', abs(m['decay']) > DB),
                              ('release', m['release'] is not None and abs(m['release']) > DB),
                              ('click', m['click'] > CLICK)):
                if bad:
                    fails.append(f'{name}({c})')
        row['fails'] = fails
    return rows


def worst(row, k, f=lambda v: abs(v)):
    vals = [m[k] for m in row['ch'] if not m['silent']]
    return max(vals, key=f) if vals else float('nan')


def worst_release(row):
    vals = [m['release'] for m in row['ch'] if not m['silent'] and m['release'] is not None]
    return f"{max(vals, key=abs):+6.2f}" if vals else '     -'


def report(program, rows):
    warn = []
    for row in rows:
        on = ['off' if m.get('off') else f"{m['oa']}/{m['ob']}" for m in row['ch']]
        line = (f"{program:3d} {PRESETS[program][0][:13]:13s} key {row['key']:3d} vel {row['vel']:3d}  "
                f"onset fs/bk L {on[0]:>9s} R {on[1]:>9s}  ")
        if all(not m['silent'] or m['off'] for m in row['ch']) and any(not m['silent'] for m in row['ch']):
            line += (f"d {worst(row, 'don'):+5.1f} x {worst(row, 'cross'):+3d}  {worst(row, 'cents'):+7.2f} c  {worst(row, 'ddb'):+6.2f} dB  "
                     f"r {worst(row, 'r', lambda v: -v):.4f}  decay {worst(row, 'decay'):+6.2f}  release {worst_release(row)}  click x{worst(row, 'click'):.2f}  ")
            for m in row['ch']:
                # (Notes of a run that overlap start over the last one's tail, not in silence.)
                if m['silent'] or PRESETS[program][3] * GRID < HOLD:
                    continue
                if not 0 <= m['late'] <= 2 or m['pre'] > 1e-4:
                    warn.append(f" program {program} key {row['key']} vel {row['vel']}: FluidSynth's first "
                                f"sound {m['late']} frames after its predicted voice start, level before it "
                                f"{m['pre']:.1e} of the peak (expected 1 frame after, and silence)")
        print(line + ('PASS' if not row['fails'] else 'FAIL ' + ' '.join(row['fails'])))
    for w in sorted(set(warn)):
        print('warning:' + w)


def render_pair(program, work, font, candidate):
    """Write the MIDI file, render FluidSynth and the candidate; return (fs, cand, notes)."""
    notes = notes_for(program)
    mid, ref = os.path.join(work, f'p{program}.mid'), os.path.join(work, f'p{program}-fluidsynth.wav')
    controls = {i: c for i, (_, _, c) in enumerate(CONTROLLED[program][1])} if program in CONTROLLED else None
    if program in TOURS:
        write_tour(mid, TOURS[program], notes)
    else:
        write_smf(mid, program_of(program), notes, controls=controls)
    fluid_render(mid, ref, font)
    fs, cand = read_wav(ref), candidate(mid, program_of(program), notes)
    length = max(len(fs), len(cand))
    pad = lambda x: np.vstack([x, np.zeros((length - len(x), 2), np.float32)])
    return pad(fs), pad(cand), notes


def compare(programs, work, font, candidate, cand_lat=lambda n: 0):
    t0, results = time.time(), []
    for p in programs:
        fs, cand, notes = render_pair(p, work, font, candidate)
        results.append((p, measure(fs, cand, notes, cand_lat)))
    diffs = [m['db'] for _, rows in results for row in rows for m in row['ch'] if not m['silent']]
    offset = float(np.median(diffs)) if diffs else 0.0
    print(f'FluidSynth voice latency on the {GRID}-frame grid: +{fluid_start(GRID) - GRID} frames; '
          f'global level offset (candidate - FluidSynth): {offset:+.2f} dB')
    print('columns: onset frames after the MIDI frame (FluidSynth/candidate) per channel, d = onset '
          'difference after the latencies, pitch cents, level dB after the offset, envelope r, decay dB, '
          'click ratio (each the worst of L/R)')
    for p, rows in results:
        report(p, judge(rows, offset))
    notes = [row for _, rows in results for row in rows]
    failed = [row for row in notes if row['fails']]
    print(f'summary: {len(notes) - len(failed)}/{len(notes)} notes pass, {len(failed)} fail '
          f'({time.time() - t0:.1f} s)')
    return results


def self_test(work, font):
    """FluidSynth against FluidSynth at another gain, with errors planted on some notes."""
    program = 8
    # note index: (the check that must fail, checks that may fail with it)
    plant = {1: ('pitch', ('onset',)), 2: ('pitch', ()), 3: ('level', ()), 4: ('onset', ()),
             5: ('click', ()), 6: ('decay', ('envelope', 'release')), 7: ('envelope', ('decay', 'release')),
             8: ('release', ())}
    print('self-test: Celesta; candidate = FluidSynth at -g 1.4 (+2.9 dB, taken out by the offset) with '
          'planted errors: note 1 pitch bend +1 semitone (FluidSynth plays +99 cents), note 2 bend +100/8192 '
          '(FluidSynth plays +2 cents), note 3 -3 dB, note 4 onset +100 frames, note 5 9 frames cut out at '
          '0.6 s, note 6 decay 20 dB/s faster from 0.2 s, note 7 amplitude tremolo 6 Hz +-30 %, note 8 '
          'release 10 dB/s faster from note-off')

    def candidate(mid, prog, notes):
        bent, wav = os.path.join(work, 'planted.mid'), os.path.join(work, 'planted.wav')
        write_smf(bent, prog, notes, bends={1: 8192 + 4096, 2: 8192 + 100, 3: 8192})
        fluid_render(bent, wav, font, gain='1.4')
        x = read_wav(wav).copy()
        span = [(n, m) for (n, _, _), (m, _, _) in zip(notes, notes[1:] + [(len(x), 0, 0)])]
        (n3, e3), (n4, e4), (n5, e5), (n6, e6), (n7, e7), (n8, e8) = span[3:9]
        x[n3:e3] *= 10 ** (-3 / 20)
        x[n4:e4] = np.vstack([np.zeros((100, 2), np.float32), x[n4:e4 - 100]])
        cut = fluid_start(n5) + int(0.6 * RATE)
        x[cut:e5 - 9] = x[cut + 9:e5].copy()
        t = np.maximum(np.arange(e6 - n6) - fluid_start(n6) + n6 - int(0.2 * RATE), 0)[:, None] / RATE
        x[n6:e6] *= (10 ** (-20 * t / 20)).astype(np.float32)
        t = np.arange(e7 - n7)[:, None] / RATE
        x[n7:e7] *= (1 + 0.3 * np.sin(2 * np.pi * 6 * t)).astype(np.float32)
        t = np.maximum(np.arange(e8 - n8) - fluid_start(n8 + HOLD) + n8, 0)[:, None] / RATE
        x[n8:e8] *= (10 ** (-10 * t / 20)).astype(np.float32)
        return x

    results = compare([program], work, font, candidate, lambda n: fluid_start(n) - n)
    ok = True
    for i, row in enumerate(results[0][1]):
        got = {f.split('(')[0] for f in row['fails']}
        need, may = plant.get(i, (None, ()))
        if (need is None and got) or (need is not None and (need not in got or got - {need, *may})):
            ok = False
            print(f'self-test: note {i} (key {row["key"]} vel {row["vel"]}) failed {sorted(got) or "nothing"}, '
                  f'expected {need or "a pass"}')
    print('self-test ' + ('PASSED: the clean notes pass and every planted error is caught' if ok else 'FAILED'))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--presets', default=','.join(map(str, PRESETS)),
                    help='programs, e.g. 14,8 (1010: Music Box with controller changes; 1011: Music '
                         'Box struck again before note-off, with the sustain pedal; 1012: Celesta with the '
                         'pitch wheel; 1014: Tubular Bells '
                         'from C2 to C7; 2000: a General MIDI file through the whole font; 2001 or '
                         '"drums": the standard kit through the whole font; any other program 0 to 127 '
                         'plays seven keys; "melodic": all 128)')
    ap.add_argument('--keep', metavar='DIR', help='keep the MIDI files and renders in DIR')
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--bellkeys', default=os.environ.get('BELLKEYS_BIN', os.path.join(repo, '.build/release/bellkeys')))
    ap.add_argument('--font', default=FONT)
    ap.add_argument('--self-test', action='store_true', help='FluidSynth against itself with planted errors')
    args = ap.parse_args()
    programs = []
    for token in (t for t in args.presets.split(',') if t):
        if token in ('melodic', 'drums'):
            programs += list(range(128)) if token == 'melodic' else [2001]
        elif token.isdigit() and (int(token) in PRESETS or int(token) < 128):
            programs.append(int(token))
        else:
            ap.error(f'presets are a program 0 to 127, "melodic", "drums", or one of {sorted(PRESETS)}')
    for p in programs:
        PRESETS.setdefault(p, (f'program {p}', GENERIC_KEYS, GENERIC_MULTI, GENERIC_SPACING))
    if not shutil.which('fluidsynth'):
        print('cannot run: fluidsynth is not installed'); return 2
    if not os.path.isfile(args.font):
        print(f'cannot run: no SoundFont at {args.font}'); return 2
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    work = args.keep or tempfile.mkdtemp(prefix='sfcompare-')
    try:
        if args.self_test:
            return self_test(work, args.font)
        if not os.access(args.bellkeys, os.X_OK):
            print(f'cannot run: no bellkeys binary at {args.bellkeys} (set BELLKEYS_BIN or --bellkeys)'); return 2
        helptext = subprocess.run([args.bellkeys, 'render', '--help'], capture_output=True, text=True).stdout
        if '--program' not in helptext or '--bank' not in helptext:
            print(f'cannot run: {args.bellkeys} render has no --program/--bank options yet'); return 2

        def candidate(mid, prog, notes):
            wav = mid[:-4] + '-bellkeys.wav'
            bellkeys_render(args.bellkeys, mid, wav, args.font, prog)
            # (A tour is rendered 6 dB down, put back here: the run has one level offset.)
            return read_wav(wav) * np.float32(10 ** (6 / 20)) if prog is None else read_wav(wav)

        results = compare(programs, work, args.font, candidate)
        failed = any(row['fails'] for _, rows in results for row in rows)
        # A map that names the preset and nothing else renders the same bytes as --map FONT --program P.
        singles = [q for q in programs if q not in TOURS]
        same = True
        if singles:
            p = 1010 if 1010 in programs else singles[0]     # the controller run, when it runs
            mapped, direct = os.path.join(work, 'map.json'), os.path.join(work, f'p{p}-bellkeys.wav')
            with open(mapped, 'w') as f:
                f.write('{"soundfont": "%s", "bank": 0, "program": %d}\n' % (os.path.abspath(args.font), program_of(p)))
            via_map = os.path.join(work, f'p{p}-map.wav')
            run([args.bellkeys, 'render', os.path.join(work, f'p{p}.mid'), '-o', via_map, '--map', mapped,
                 '--rate', str(RATE), '--format', 'f32', '--quiet'])
            same = open(via_map, 'rb').read() == open(direct, 'rb').read()
            print(f'a map of preset {program_of(p)} alone renders the same bytes as --program {program_of(p)} '
                  f'({PRESETS[p][0]}): {"PASS" if same else "FAIL"}')
        return 1 if failed or not same else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
