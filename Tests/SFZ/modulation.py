#!/usr/bin/env python3
"""SFZ envelopes and LFOs against sfizz: a held note's pitch and level tracked block by block in
sfizz's render and in bellkeys'.

The instrument (written here): one region over a looped 480 Hz sine (48 kHz, 100 frames a
period, 4,800 frames, pitch_keycenter 69, ampeg_release 3 s so the level holds after
note-off), with the opcodes of each case below. Key 69 is struck at velocity 100 at frame 4,805
(off the 16-frame grid sfizz moves a filter's cutoff on, which it counts from its blocks'
starts) and held 2 s, then let go; both renders run at 48 kHz (`sfizz_render -s 48000`, its
default block of 1,024 frames and quality 2; `bellkeys render --rate 48000`).

Both renders are read from the note's frame and cut into 64-frame blocks. In each block the
pitch, in cents from 480 Hz, is the mean of the instantaneous frequency (the phase of the
analytic signal) averaged over 4 blocks, and the level is the mean of its magnitude (dB). Every
block but the first and last 40 (53 ms: the analytic signal's edges ring there) and eight
either side of the note-off must have:

  pitch   within 1 cent of sfizz's, from the note-on to 0.15 s after the note-off (where the
          pitch envelopes' releases have ended: later, as the level falls, the analytic
          signal's pitch ripples in both renders, up to 1.4 cents in sfizz's at 0.25 s);
  level   within 0.2 dB of sfizz's after one offset for the whole note (sfizz's default
          volume is 7.35 dB lower, and the pan laws differ by 0.01 dB), while the key is held;
          after the note-off (the blocks from 8 after it to 0.25 s), each render's level less
          its own render of the plain region's (the two volume envelopes' releases differ, and
          so cancel) within 0.2 dB of sfizz's, which holds the pitch and filter envelopes'
          releases and the LFOs running on.

sfizz renders each case three times (its renders may differ run to run), and bellkeys must be
within the bounds of every one. And sfizz's own track must move as the case says (its pitch or
level over the range given), so a render in which nothing moved cannot pass. Exit 0 when every
block of every case matches, 1 when any does not, 2 when it cannot run (no sfizz_render, from
`pip install pysfizz`, or no release bellkeys).
"""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import wave

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                'Tools', 'python'))
import bells  # noqa: E402
import smf  # noqa: E402

RATE, BLOCK = 48_000, 64
HERTZ = 480.0
START = 4_805                      # the note's frame: 709 frames into a 1,024-frame block of sfizz's, off its 16-frame grid
HELD = 96_000                      # 2 s
AFTER = 14_400                     # 0.3 s after the note-off in the tracks
PITCH_AFTER = 7_200                # of which the first 0.15 s compared (the pitch's releases)
EDGE = 40                          # blocks left out at either end
SMOOTH = 4                         # blocks the pitch track is averaged over
RUNS = 3                           # sfizz renders of each case
# The sample's frames: fewer than sfizz's preload (8,192 frames), so the whole file is in memory
# from the start. A longer one is streamed by a background thread, which sfizz_render does not
# always wait for: 1 render in 3 of a 48,000-frame sample here went silent after 0.2 s.
LOOP = 4_800
PITCH_BOUND, LEVEL_BOUND = 1.0, 0.2

# (name, opcodes, what sfizz's track must show: ('pitch' or 'level', least range 5th to 95th
# percentile, in cents or dB), and the times (s from the note) where the wave jumps, left out
# with 4 blocks either side: a jump sits a frame or two apart in the two renders, and the
# smoothed track is then a cent apart for a block or two).
CASES = [
    ('pitchlfo, sine', 'pitchlfo_freq=5 pitchlfo_depth=50', ('pitch', 80), ()),
    ('pitchlfo, triangle, delay and fade',
     'pitchlfo_wave=0 pitchlfo_freq=4 pitchlfo_delay=0.3 pitchlfo_fade=0.5 pitchlfo_depth=100', ('pitch', 150), ()),
    ('pitchlfo, ramp', 'pitchlfo_wave=6 pitchlfo_freq=2 pitchlfo_depth=30', ('pitch', 40), (0.5, 1.0, 1.5, 2.0)),
    ('pitchlfo, square', 'pitchlfo_wave=3 pitchlfo_freq=3 pitchlfo_depth=40', ('pitch', 30),
     tuple(k / 6 for k in range(1, 14))),
    ('amplfo', 'amplfo_freq=3 amplfo_depth=4', ('level', 6), ()),
    ('amplfo, square, delay and fade', 'amplfo_wave=3 amplfo_freq=2 amplfo_delay=0.2 amplfo_fade=0.4 amplfo_depth=3',
     ('level', 2), tuple(0.2 + k / 4 for k in range(1, 9))),
    ('pitcheg', 'pitcheg_attack=0.2 pitcheg_decay=0.5 pitcheg_sustain=25 pitcheg_release=0.3 pitcheg_depth=1200',
     ('pitch', 600), ()),
    ('pitcheg, delay, start, hold, velocity',
     'pitcheg_delay=0.1 pitcheg_start=20 pitcheg_attack=0.05 pitcheg_hold=0.1 pitcheg_decay=1 pitcheg_sustain=0 '
     'pitcheg_depth=-600 pitcheg_vel2depth=300', ('pitch', 250), ()),
    ('pitcheg, default release (a 50 ms line)', 'pitcheg_depth=700', ('pitch', 0), ()),
    ('fileg', 'cutoff=150 fileg_attack=0.1 fileg_decay=0.8 fileg_sustain=30 fileg_depth=3600', ('level', 6), ()),
    ('fileg, start, hold, release, velocity',
     'cutoff=200 fileg_start=30 fileg_attack=0.05 fileg_hold=0.2 fileg_decay=0.3 fileg_sustain=60 fileg_release=0.2 '
     'fileg_depth=1800 fileg_vel2depth=600', ('level', 1.5), ()),
    ('fillfo', 'cutoff=480 resonance=3 fillfo_freq=2 fillfo_depth=1200', ('level', 8), ()),
    # (A triangle: a wave that jumps, on the cutoff, rings in the filter for some 20 ms, and
    # sfizz's smoother, frame by frame, and bellkeys', tick by tick, ring apart there: a saw on
    # fillfo, 900 cents, was up to 2.7 cents apart in pitch in the blocks around its jumps.)
    ('fillfo, triangle, delay and fade', 'cutoff=480 fillfo_wave=0 fillfo_freq=1.5 fillfo_delay=0.1 fillfo_fade=0.3 '
     'fillfo_depth=900', ('level', 4), ()),
    ('pitcheg and fileg apart, pitchlfo and amplfo',
     'cutoff=300 pitcheg_attack=0.3 pitcheg_sustain=0 pitcheg_decay=0.6 pitcheg_depth=200 '
     'fileg_delay=0.2 fileg_attack=0.4 fileg_depth=2400 fileg_sustain=50 fileg_decay=0.3 '
     'pitchlfo_freq=6 pitchlfo_depth=20 amplfo_freq=1.5 amplfo_depth=2', ('level', 8), ()),
]


def write_instrument(work, opcodes):
    path = os.path.join(work, 'case.sfz')
    with open(path, 'w') as f:
        f.write('<region> sample=sine.wav pitch_keycenter=69 loop_mode=loop_continuous loop_start=0 '
                f'loop_end={LOOP - 1} ampeg_release=3 volume=3 {opcodes}\n')
    return path


def read_wav(path):
    """The left channel as float64: 16-bit PCM (sfizz_render) or 32-bit float (bellkeys)."""
    with open(path, 'rb') as f:
        tag = int.from_bytes(f.read(22)[20:22], 'little')
    if tag == 1:
        with wave.open(path) as w:
            x = np.frombuffer(w.readframes(w.getnframes()), '<i2').reshape(-1, w.getnchannels())
        return x[:, 0] / 32768.0
    return bells.read_float_wav(path, RATE)[:, 0].astype(np.float64)


def tracks(x):
    """Per 64-frame block from the note's frame: (cents from 480 Hz, level in dB)."""
    x = np.asarray(x[START:START + HELD + AFTER], np.float64)
    n = len(x)
    h = np.zeros(n)
    h[0] = 1
    h[1:(n + 1) // 2] = 2
    if n % 2 == 0:
        h[n // 2] = 1
    analytic = np.fft.ifft(np.fft.fft(x) * h)
    frequency = np.r_[0, np.diff(np.unwrap(np.angle(analytic)))] * RATE / (2 * np.pi)
    blocks = n // BLOCK
    hz = np.convolve(frequency[:blocks * BLOCK].reshape(blocks, BLOCK).mean(1), np.ones(SMOOTH) / SMOOTH, 'same')
    magnitude = np.abs(analytic[:blocks * BLOCK]).reshape(blocks, BLOCK).mean(1)
    return 1200 * np.log2(np.maximum(hz, 1) / HERTZ), 20 * np.log10(np.maximum(magnitude, 1e-10))


def judge(sfizz, ours, jumps, references):
    """Messages for every block out of bounds, the level offset, the blocks compared (the pitch's,
    the level's while held, the level's after the note-off). `references`: sfizz's and bellkeys'
    tracks of the plain region, whose levels after the note-off each render's are taken from."""
    (sc, sl), (bc, bl) = sfizz, ours
    (_, sfizz_plain), (_, ours_plain) = references
    blocks = min(len(sc), len(bc), len(sfizz_plain), len(ours_plain))
    off = HELD // BLOCK
    keep = np.zeros(blocks, bool)
    keep[EDGE:min(blocks - EDGE, (HELD + PITCH_AFTER) // BLOCK)] = True
    keep[off - 8:off + 8] = False
    for t in jumps:
        b = int(t * RATE) // BLOCK
        keep[max(0, b - 4):b + 5] = False
    held = keep.copy()
    held[off:] = False
    released = np.zeros(blocks, bool)
    released[off + 8:blocks - EDGE] = True
    for t in jumps:
        b = int(t * RATE) // BLOCK
        released[max(0, b - 4):b + 5] = False
    offset = np.median((bl - sl)[:blocks][held])
    problems = []
    for b in np.nonzero(keep)[0]:
        if abs(bc[b] - sc[b]) > PITCH_BOUND:
            problems.append(f'block {b} ({b * BLOCK / RATE:.3f} s): pitch {bc[b]:+.2f} cents, sfizz {sc[b]:+.2f}')
        if held[b] and abs(bl[b] - offset - sl[b]) > LEVEL_BOUND:
            problems.append(f'block {b} ({b * BLOCK / RATE:.3f} s): level {bl[b] - offset:.2f} dB, sfizz {sl[b]:.2f}')
    for b in np.nonzero(released)[0]:
        ours_moved, sfizz_moved = bl[b] - ours_plain[b], sl[b] - sfizz_plain[b]
        if abs(ours_moved - sfizz_moved) > LEVEL_BOUND:
            problems.append(f'block {b} ({b * BLOCK / RATE:.3f} s, released): level {ours_moved:+.2f} dB from the '
                            f'plain region\'s, sfizz {sfizz_moved:+.2f}')
    return problems, offset, keep, held, released


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f'failed ({r.returncode}): {" ".join(cmd)}\n{r.stderr.strip()}')


def check(bellkeys, sfizz_render, work):
    bells.write_wav(os.path.join(work, 'sine.wav'),
                    np.round(0.9 * 32767 * np.sin(2 * np.pi * np.arange(LOOP) / 100)).astype('<i2'), RATE)
    mid = os.path.join(work, 'note.mid')
    # 480 ticks a quarter at 10 ms a quarter: a tick is a frame at 48 kHz.
    smf.write(mid, [(START, smf.message(0x90, 69, 100)), (START + HELD, smf.message(0x80, 69, 0))],
              division=480, tempo=10_000, end=START + HELD + 2 * AFTER)
    # The plain region, whose level after the note-off each render's cases are measured from:
    # the volume envelopes' releases differ (docs/design/sfz-modulation.md), and so cancel.
    plain = write_instrument(work, '')
    run([bellkeys, 'render', mid, '-o', os.path.join(work, 'plain-bellkeys.wav'), '--map', plain, '--rate', str(RATE),
         '--format', 'f32', '--quiet'])
    run([sfizz_render, '--sfz', plain, '--midi', mid, '--wav', os.path.join(work, 'plain-sfizz.wav'), '-s', str(RATE)])
    references = (tracks(read_wav(os.path.join(work, 'plain-sfizz.wav'))),
                  tracks(read_wav(os.path.join(work, 'plain-bellkeys.wav'))))
    failed = False
    for name, opcodes, (kind, least), jumps in CASES:
        sfz = write_instrument(work, opcodes)
        ours_wav = os.path.join(work, 'bellkeys.wav')
        run([bellkeys, 'render', mid, '-o', ours_wav, '--map', sfz, '--rate', str(RATE), '--format', 'f32',
             '--quiet'])
        ours = tracks(read_wav(ours_wav))
        print(f'{name} ({opcodes}):')
        problems, worst = [], (0.0, 0.0, 0.0)
        for k in range(RUNS):
            theirs_wav = os.path.join(work, f'sfizz-{k}.wav')
            run([sfizz_render, '--sfz', sfz, '--midi', mid, '--wav', theirs_wav, '-s', str(RATE)])
            theirs = tracks(read_wav(theirs_wav))
            found, offset, keep, held, released = judge(theirs, ours, jumps, references)
            problems += [f'sfizz run {k + 1}: {p}' for p in found]
            n = len(keep)
            pitch = np.abs(ours[0][:n] - theirs[0][:n])[keep].max()
            level = np.abs(ours[1][:n] - offset - theirs[1][:n])[held].max()
            moved = np.abs((ours[1][:n] - references[1][1][:n]) - (theirs[1][:n] - references[0][1][:n]))[released]
            worst = (max(worst[0], pitch), max(worst[1], level), max(worst[2], moved.max()))
            track = (theirs[0] if kind == 'pitch' else theirs[1])[:n]
            spread = np.percentile(track[held if kind == 'level' else keep], 95) - \
                np.percentile(track[held if kind == 'level' else keep], 5)
            if least and spread < least:
                problems.append(f'sfizz run {k + 1}: its {kind} moves {spread:.1f} (expected at least {least})')
        print(f'  worst: pitch {worst[0]:.2f} cents, level {worst[1]:.3f} dB held, {worst[2]:.3f} dB released, '
              f'from sfizz\'s (bellkeys {offset:+.2f} dB throughout) {"FAIL" if problems else "PASS"}')
        for p in problems[:12]:
            print('  FAIL ' + p)
        if len(problems) > 12:
            print(f'  ... and {len(problems) - 12} more')
        failed = failed or bool(problems)
    print('SFZ modulation: ' + ('FAIL' if failed else f'every block of all {len(CASES)} cases matches sfizz'))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--bellkeys', default=os.environ.get('BELLKEYS_BIN', os.path.join(repo, '.build/release/bellkeys')))
    ap.add_argument('--keep', metavar='DIR', help='keep the instrument, the MIDI file and the renders in DIR')
    args = ap.parse_args()
    sfizz_render = shutil.which('sfizz_render') or os.path.join(sysconfig.get_path('scripts'), 'sfizz_render')
    if not os.access(sfizz_render, os.X_OK):
        # pip puts the wheel's binary beside the package (its data scheme's bin).
        sfizz_render = os.path.join(sysconfig.get_path('purelib'), 'bin', 'sfizz_render')
    if not os.access(sfizz_render, os.X_OK) or not os.access(args.bellkeys, os.X_OK):
        print('modulation.py: needs sfizz_render (pip install pysfizz) and a release bellkeys '
              '(swift build -c release --product bellkeys)')
        return 2
    work = args.keep or tempfile.mkdtemp(prefix='bellkeys-sfz-modulation-')
    os.makedirs(work, exist_ok=True)
    try:
        return check(args.bellkeys, sfizz_render, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
