#!/usr/bin/env python3
"""A SoundFont zone's reverb send against FluidSynth's: how much of each note goes into the room.

The two reverbs are different rooms, so their tails are not compared. What is compared is how
much each note sends, relative to a reference note: each case is one note, rendered alone in a
fresh process from the same frame, and both reverbs are linear, so a case's wet signal is a
scaled copy of the reference's. The wet signal is the render with the room less the render
without it: FluidSynth with -R 1 less -R 0 (its dry path is the same in both), bellkeys with
--reverb hall less --reverb off. The scale a = <wet, reference> / <reference, reference> over
both channels, and the rest (|wet - a x reference| / |wet|) must be under 1 % (the copy is a
copy). FluidSynth's a must be the send its formula gives (clip((generator + 200 x CC91 / 128) /
1000, 0, 1), the voice's mono signal before its pan: a stereo pair sends both sides), and
bellkeys' a must be FluidSynth's within 0.05 dB, but where a difference is known and kept: CC91's
part of a voice panned hard, or of a stereo pair, is taken after the pan from its two sides
averaged, 3.01 dB under FluidSynth's (docs/soundfonts.md). With no CC91 message at all, both
start the channel at 0.

The font (written here with Tools/python/sf2.py): a 0.1-s decaying noise burst (44.1 kHz, root
key 60, quiet enough that bellkeys' limiter never acts), one zone per case on its own key, that key its root (no note is transposed).

Exit 0 when every case matches, 1 when any does not, 2 when it cannot run.
"""
import os, sys
import numpy as np

import compare  # noqa: E402  (RATE, GRID, run, the WAV reader; Tools/python on sys.path)
import sf2  # noqa: E402
import smf  # noqa: E402

RATE, N = compare.RATE, compare.GRID
# (name, key, the zone's reverb send generator, its pan, stereo, CC91 (None: no message),
# FluidSynth's send / the reference's, bellkeys against FluidSynth in dB where a difference is kept)
KEPT = 20 * np.log10(0.5 ** 0.5)
CASES = [
    ('reference: send 200 (20 %)', 60, 200, None, False, 0, 1.0, 0),
    ('send 100', 61, 100, None, False, 0, 0.5, 0),
    ('send 500', 62, 500, None, False, 0, 2.5, 0),
    ('send 1000', 63, 1000, None, False, 0, 5.0, 0),
    ('send 1200 (clipped at 1000)', 64, 1200, None, False, 0, 5.0, 0),
    ('send 200, panned hard left', 65, 200, -500, False, 0, 1.0, 0),
    ('send 200, a stereo pair', 66, 200, None, True, 0, 2.0, 0),
    ('send 0, CC91 64', 67, 0, None, False, 64, 0.5, 0),
    ('send 0, CC91 127', 67, 0, None, False, 127, 127 / 128, 0),
    ('send 200, CC91 64', 60, 200, None, False, 64, 1.5, 0),
    ('send 200, no CC91 at all', 60, 200, None, False, None, 1.0, 0),
    ('send 0, CC91 64, hard left', 68, 0, -500, False, 64, 0.5, KEPT),
    ('send 0, CC91 64, a stereo pair', 69, 0, None, True, 64, 1.0, KEPT),
]


def write_font(path):
    rng = np.random.default_rng(91)
    n = RATE // 10
    burst = 0.05 * rng.standard_normal(n) * np.exp(-np.arange(n) / (0.02 * RATE))
    frames = np.round(np.clip(burst, -1, 1) * 32767).astype('<i2').tobytes()
    samples = [sf2.Sample('burst', frames, RATE, root=60),
               sf2.Sample('burst L', frames, RATE, root=60, kind='left', link=2),
               sf2.Sample('burst R', frames, RATE, root=60, kind='right', link=1)]
    zones, keys = [], set()
    for _, key, send, pan, stereo, *_ in CASES:
        if key in keys:
            continue
        keys.add(key)
        generators = {16: send}
        if stereo:
            zones.append(sf2.Zone(1, (key, key), root=key, pan=-500, generators=generators))
            zones.append(sf2.Zone(2, (key, key), root=key, pan=500, generators=generators))
        else:
            zones.append(sf2.Zone(0, (key, key), root=key, pan=pan, generators=generators))
    sf2.write(path, samples, zones, preset='sends')


def write_midi(path, key, cc91):
    events = [(0, smf.message(0xC0, 0))] + ([(0, smf.message(0xB0, 91, cc91))] if cc91 is not None else [])
    events += [(N, smf.message(0x90, key, 100)), (N + RATE // 5, smf.message(0x80, key, 0)),
               (N + 3 * RATE, smf.message(0xB0, 7, 100))]
    smf.write(path, events, division=441, tempo=10000)


def wet(renders):
    """The room's part: the render with it less the render without, padded to one length."""
    (a, b) = renders
    n = max(len(a), len(b))
    pad = lambda x: np.pad(np.asarray(x, np.float64), ((0, n - len(x)), (0, 0)))
    return pad(a) - pad(b)


def scale(w, reference):
    n = min(len(w), len(reference))
    w, r = w[:n].ravel(), reference[:n].ravel()
    if not np.dot(r, r) > 0:
        return 0.0, 1.0    # the reference sent nothing: no scale fits
    a = float(np.dot(w, r) / np.dot(r, r))
    rest = float(np.linalg.norm(w - a * r) / max(np.linalg.norm(w), 1e-30))
    return a, rest


def check(bellkeys, work, font):
    wets = []
    for i, (_, key, _, _, _, cc91, *_) in enumerate(CASES):
        mid = os.path.join(work, f'case-{i}.mid')
        write_midi(mid, key, cc91)
        fs, bk = [], []
        for reverb in (True, False):
            out = os.path.join(work, f'fluidsynth-{i}-{int(reverb)}.wav')
            compare.fluid_render(mid, out, font, reverb=reverb)
            fs.append(compare.read_wav(out))
        for room in ('hall', 'off'):
            out = os.path.join(work, f'bellkeys-{i}-{room}.wav')
            compare.bellkeys_render(bellkeys, mid, out, font, 0, room=room)
            bk.append(compare.read_wav(out))
        if np.abs(bk[0]).max() > 0.8:
            raise SystemExit(f'sends.py: case {i} peaks at {np.abs(bk[0]).max():.2f}, where the limiter acts')
        wets.append((wet(fs), wet(bk)))
    failed = False
    for (name, *_, expected, kept), (fs, bk) in zip(CASES, wets):
        (af, rf), (ab, rb) = scale(fs, wets[0][0]), scale(bk, wets[0][1])
        db = 20 * np.log10(max(ab, 1e-9) / max(af, 1e-9))
        ok = abs(af - expected) <= 0.01 * expected and rf < 0.01 and rb < 0.01 and abs(db - kept) <= 0.05
        failed = failed or not ok
        print(f'{"ok  " if ok else "FAIL"}  {name:32} FluidSynth {af:6.3f} (its formula {expected:6.3f}, '
              f'rest {rf:.1e}), bellkeys {ab:6.3f} (rest {rb:.1e}): {db:+.3f} dB'
              + (f' (kept: {kept:+.2f} dB, CC91 after the pan)' if kept else ''))
    kept = sum(1 for case in CASES if case[-1])
    print('reverb sends: ' + ('FAIL' if failed else f'all {len(CASES)} cases send as FluidSynth does '
                                                      f'({kept} with the difference kept)'))
    return 1 if failed else 0


def main():
    return compare.beside(__doc__, 'sends', write_font, check)


if __name__ == '__main__':
    sys.exit(main())
