#!/usr/bin/env python3
"""Live modulators against FluidSynth: a note held while its controllers, pressure and the wheel
move, its pitch and level tracked block by block in both renders.

The font (written here with Tools/python/sf2.py): two zones over a looped 441 Hz sine (44.1 kHz,
100 frames a period, root key 69). Keys 0 to 63 have three modulators of their own besides
FluidSynth's defaults: CC2 to fine tune (100 cents), CC3 to attenuation (120 cB), polyphonic
pressure to fine tune (200 cents); keys 64 to 127 have only the defaults, so bellkeys keeps their
voices idle until the mod wheel or pressure gives their vibrato a depth, and then wakes them with
their LFOs where they would have been. Twice, first key 57 (220.5 Hz) then key 69, a note is
held 3.6 s while, every 0.3 s, one thing moves:

  CC1 127 (the default vibrato, 50 cents at 8.176 Hz), CC1 0, channel pressure 100 (the default
  vibrato again), pressure 0, CC2 64 (+50 cents), CC3 100 (-9.4 dB), the key's pressure 127
  (+198.4 cents), the pitch wheel 12288 (+1 semitone at FluidSynth's default range), reset all
  controllers (all back), and 0.6 s more.

Both renders are read from the voice's first frame (FluidSynth's fast renderer starts it late by
a known amount: compare.py's fluid_start), and cut into the voice's 64-frame blocks, where both
move their modulation. In each block: the pitch, in cents from 441 Hz, as the mean of the
instantaneous frequency (the phase of the analytic signal), averaged over 4 blocks (a transposed
note's interpolation ripples a cent or two from block to block, FluidSynth's 4-point and
bellkeys' sinc each their own way), and the level (the mean of its
magnitude, dB: a sine's whatever its phase in the block). Every block but the first and last 40
(58 ms: the analytic signal's edges ring there) and eight either side of each move (FluidSynth
starts a voice a block or two late, a controller at its next block, so a move reaches its voice
up to two blocks earlier in the voice's life than bellkeys' next tick; and a step in pitch or
level rings in the analytic signal's phase on both sides, as its edges do) must have:

  pitch   within 1 cent of FluidSynth's (the vibrato swings 50 cents: a vibrato a block out of
          phase is 10 cents off at its steepest);
  level   within 0.2 dB, after one offset for the whole note (bellkeys' pan law and filter gain:
          docs/soundfonts.md).

And FluidSynth's own track must show each move (the vibrato's swing, the cents, the level), so
a render in which nothing moved cannot pass. Exit 0 when every block matches, 1 when any does
not, 2 when it cannot run (no fluidsynth or bellkeys binary).
"""
import os, sys
import numpy as np

import compare  # noqa: E402  (RATE, fluid_start, renders, the WAV reader; Tools/python on sys.path)
import sf2  # noqa: E402
import smf  # noqa: E402

RATE, BLOCK, N = compare.RATE, compare.BLOCK, compare.GRID
STEP = 13_230                     # 0.3 s between moves
KEYS = {57: 220.5, 69: 441.0}      # key: Hz
FIRST = 40                        # blocks left out at either end (the analytic signal's edges)
SMOOTH = 4                        # blocks the pitch track is averaged over
MOVES = [  # (what, message bytes)
    ('CC1 127', smf.message(0xB0, 1, 127)),
    ('CC1 0', smf.message(0xB0, 1, 0)),
    ('pressure 100', smf.message(0xD0, 100)),
    ('pressure 0', smf.message(0xD0, 0)),
    ('CC2 64', smf.message(0xB0, 2, 64)),
    ('CC3 100', smf.message(0xB0, 3, 100)),
    ('key pressure 127', None),  # on the note's key
    ('wheel 12288', smf.message(0xE0, 12_288 & 127, 12_288 >> 7)),
    ('reset', smf.message(0xB0, 121, 0)),
]
HELD = (len(MOVES) + 3) * STEP
# What FluidSynth's track must show in each stretch (from the move's block + 4 to the next's):
# (vibrato swing, 5th to 95th percentile, at least, or else at most 5 cents; median cents, or
# None under a vibrato; level dB against the first stretch).
WHEEL = 100 * 4096 / 8192 * 2 * 127 / 128
EXPECTED = {57: [
    (0, 0, 0),
    (80, None, 0),        # CC1 127: 2 x 50 x 127/128 cents peak to peak (block means: a little less)
    (0, 0, 0),
    (60, None, 0),        # pressure 100: 2 x 50 x 100/128
    (0, 0, 0),
    (0, 50, 0),           # CC2 64: +100 x 64/128 cents
    (0, 50, -9.375),      # CC3 100: -120 x 100/128 cB
    (0, 50 + 200 * 127 / 128, -9.375),
    (0, 50 + 200 * 127 / 128 + WHEEL, -9.375),  # the wheel: its 2 semitones
    (0, 0, 0),            # reset: every controller, pressure and the wheel back
], 69: [                  # the defaults alone: the vibratos and the wheel
    (0, 0, 0), (80, None, 0), (0, 0, 0), (60, None, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0),
    (0, int(WHEEL), 0), (0, 0, 0),
]}


def write_font(path):
    frames = (np.round(0.5 * 32767 * np.sin(2 * np.pi * np.arange(RATE) / 100))).astype('<i2').tobytes()
    sample = sf2.Sample('sine', frames, RATE, root=69, loop=(0, RATE))
    own = sf2.Zone(0, (0, 63), root=69, loop_mode=1, modulators=[
        (0x0082, 52, 100, 0, 0), (0x0083, 48, 120, 0, 0), (0x000A, 52, 200, 0, 0)])
    sf2.write(path, [sample], [own, sf2.Zone(0, (64, 127), root=69, loop_mode=1)], preset='live sine')


def write_midi(path, key):
    events = [(0, smf.message(0xC0, 0)), (N, smf.message(0x90, key, 100))]
    events += [(N + (i + 1) * STEP, message or smf.message(0xA0, key, 127)) for i, (_, message) in enumerate(MOVES)]
    events.append((N + HELD, smf.message(0x80, key, 0)))
    smf.write(path, events, division=441, tempo=10000)


def tracks(x, start, hertz):
    """Per 64-frame block of the voice from frame `start`: (cents from `hertz`, level in dB)."""
    x = np.asarray(x[start:start + HELD], np.float64)
    n = len(x)
    spectrum = np.fft.fft(x)
    h = np.zeros(n)
    h[0] = 1
    h[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        h[n // 2] = 1
    analytic = np.fft.ifft(spectrum * h)
    frequency = np.r_[0, np.diff(np.unwrap(np.angle(analytic)))] * RATE / (2 * np.pi)
    blocks = n // BLOCK
    hz = frequency[:blocks * BLOCK].reshape(blocks, BLOCK).mean(1)
    # Over four blocks (5.8 ms, a 21st of the vibrato's period): a transposed note's
    # interpolation leaves a ripple of a cent or two in single blocks, each renderer its own.
    hz = np.convolve(hz, np.ones(SMOOTH) / SMOOTH, 'same')
    # The level from the analytic signal's magnitude: a sine's, whatever its phase in the block.
    magnitude = np.abs(analytic[:blocks * BLOCK]).reshape(blocks, BLOCK).mean(1)
    return 1200 * np.log2(np.maximum(hz, 1) / hertz), 20 * np.log10(np.maximum(magnitude, 1e-10))


def judge(fs, bk, expected):
    """Messages for every block out of bounds, and for any expected move FluidSynth lacks."""
    (fc, fl), (bc, bl) = fs, bk
    blocks = min(len(fc), len(bc))
    move_blocks = [(i + 1) * STEP // BLOCK for i in range(len(MOVES))]
    keep = np.ones(blocks, bool)
    keep[:FIRST] = False
    for b in move_blocks:
        keep[max(0, b - 8):b + 8] = False
    keep[blocks - FIRST:] = False
    offset = np.median((bl - fl)[:blocks][keep])
    problems = []
    for b in np.nonzero(keep)[0]:
        if abs(bc[b] - fc[b]) > 1.0:
            problems.append(f'block {b} ({b * BLOCK / RATE:.3f} s): pitch {bc[b]:+.2f} cents, FluidSynth {fc[b]:+.2f}')
        if abs(bl[b] - offset - fl[b]) > 0.2:
            problems.append(f'block {b} ({b * BLOCK / RATE:.3f} s): level {bl[b] - offset:.2f} dB, '
                            f'FluidSynth {fl[b]:.2f}')
    edges = [0] + move_blocks + [blocks]
    base = None
    for k, (swing, cents, db) in enumerate(expected):
        a, b = edges[k] + 4, edges[k + 1] - 1
        if k == 0:
            a = FIRST
        part = slice(a, b)
        level = np.median(fl[part])
        base = level if base is None else base
        got = (np.percentile(fc[part], 95) - np.percentile(fc[part], 5), np.median(fc[part]), level - base)
        name = 'note-on' if k == 0 else MOVES[k - 1][0]
        print(f'  after {name:17} FluidSynth swing {got[0]:6.2f} cents, pitch {got[1]:+8.2f} cents, '
              f'level {got[2]:+6.2f} dB; bellkeys pitch {np.median(bc[part]):+8.2f}')
        if swing and got[0] < swing or not swing and got[0] > 5:
            problems.append(f'after {name}: FluidSynth swings {got[0]:.1f} cents (expected {swing or "none"})')
        if cents is not None and abs(got[1] - cents) > 2 or abs(got[2] - db) > 0.3:
            problems.append(f'after {name}: FluidSynth at {got[1]:+.1f} cents, {got[2]:+.2f} dB '
                            f'(expected {cents}, {db:+.2f})')
    return problems, offset


def check(bellkeys, work, font):
    failed = False
    for key, hertz in KEYS.items():
        mid = os.path.join(work, f'live-{key}.mid')
        write_midi(mid, key)
        fs_wav, bk_wav = os.path.join(work, f'fluidsynth-{key}.wav'), os.path.join(work, f'bellkeys-{key}.wav')
        compare.fluid_render(mid, fs_wav, font)
        compare.bellkeys_render(bellkeys, mid, bk_wav, font, 0)
        print(f'key {key} ({"its own modulators" if key < 64 else "the defaults alone: idle until moved"}):')
        fs = tracks(compare.read_wav(fs_wav)[:, 0], compare.fluid_start(N), hertz)
        bk = tracks(compare.read_wav(bk_wav)[:, 0], N, hertz)
        problems, offset = judge(fs, bk, EXPECTED[key])
        print(f'  {len(fs[0])} blocks, bellkeys {offset:+.2f} dB against FluidSynth throughout')
        for p in problems[:20]:
            print('  FAIL ' + p)
        if len(problems) > 20:
            print(f'  ... and {len(problems) - 20} more')
        failed = failed or bool(problems)
    print('live modulators: ' + ('FAIL' if failed else 'every block of both notes matches FluidSynth'))
    return 1 if failed else 0


def main():
    return compare.beside(__doc__, 'live', write_font, check)


if __name__ == '__main__':
    sys.exit(main())
