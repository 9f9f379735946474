"""A take against its render, and the notes' onsets in it; HOLES, the stretches the checks leave out."""
import numpy as np

from common import CC7_DEFAULT, check


# Stretches of the take [first, last) the probe could not record or time, which the checks
# leave out (PipeWire only, see probe_ok), for the test under way. Changed in place only
# (HOLES[:] = ...): every part that imports it holds this one list.
HOLES = []
# How many of the events the probe sent never reached bellkeys, by bellkeys' own count of JACK
# MIDI messages (PipeWire only: see probe_ok), for the test under way: [n].
LOST = [0]


def unchecked(frame, margin=0):
    """Whether `frame` (within `margin`) lies in one of the HOLES."""
    return any(a - margin <= frame < b + margin for a, b in HOLES)


def compare(name, recording, rendered, shift=0, what="the recording", holes=None):
    """`recording` against `rendered` delayed by `shift` frames, over the recording's length,
    less `holes` (HOLES unless given). Where they differ, says by how many units in the last
    place and where."""
    holes = HOLES if holes is None else holes
    expected = np.zeros_like(recording)
    n = max(0, min(len(recording) - shift, len(rendered)))
    expected[shift:shift + n] = rendered[:n, :recording.shape[1]]
    difference = np.abs(recording.astype(np.float64) - expected)
    for a, b in holes:
        difference[max(a, 0):max(b, 0)] = 0
    if holes:
        what += f" (less {sum(min(b, len(recording)) - max(a, 0) for a, b in holes)} frames the probe missed)"
    differing = np.nonzero(difference.max(axis=1) > 0)[0]
    where = ""
    if len(differing):
        ulps = difference / np.spacing(np.maximum(np.abs(expected), np.abs(recording)))
        # Stretches of differing frames less than 1024 frames apart, as "first-last".
        breaks = np.nonzero(np.diff(differing) > 1024)[0]
        starts, ends = np.r_[differing[0], differing[breaks + 1]], np.r_[differing[breaks], differing[-1]]
        where = (f" (up to {ulps.max():.0f} units in the last place), in {len(starts)} stretches: "
                 + ", ".join(f"{a}-{b}" for a, b in zip(starts[:6], ends[:6])) + (", ..." if len(starts) > 6 else "")
                 + f"; at frame {differing[0]} recorded {float(recording[differing[0], 0]):.9g}, rendered {float(expected[differing[0], 0]):.9g}")
    check(len(differing) == 0 and recording.shape[1] == rendered.shape[1],
          f"{name}: {what} equals the offline render{f' delayed {shift} frames' if shift else ''}: "
          f"{len(recording)} frames x {recording.shape[1]} channels (render {len(rendered)} x {rendered.shape[1]}), "
          f"max |difference| {difference.max():.3g}, {len(differing)} frames differ{where}; peak {np.abs(recording).max():.4f}")


def find_onsets(audio, notes, window=500):
    """notes: [(frame, expected jump)]. Returns each note's onset frame, or None: the frames in
    reach where the first channel jumps up by at least 40 % of the smallest expected jump of
    the notes close together, matched in order when there are as many as notes."""
    x = np.concatenate([[0.0], audio[:, 0].astype(np.float64)])    # frame k is x[k + 1]; silence before T0
    found = [None] * len(notes)
    order = sorted(range(len(notes)), key=lambda i: notes[i][0])
    group = []
    for i in order + [None]:
        if group and (i is None or notes[i][0] - notes[group[-1]][0] > 2 * window):
            lo, hi = max(0, notes[group[0]][0] - window), min(len(audio), notes[group[-1]][0] + window)
            threshold = 0.4 * min(notes[g][1] for g in group)
            jumps = lo + np.nonzero(np.diff(x[lo:hi + 1]) > threshold)[0]
            if len(jumps) == len(group):
                for g, at in zip(group, jumps):
                    found[g] = int(at)
            group = []
        if i is not None:
            group.append(i)
    return found


def onsets_ok(name, audio, notes, delay=0, what=""):
    """Checks that every note starts `delay` frames after its frame. Returns the errors."""
    left_out = [n for n in notes if unchecked(n[0] + delay, margin=500)]
    notes = [n for n in notes if n not in left_out]
    if left_out:
        what += f" ({len(left_out)} in stretches the probe missed left out)"
    found = find_onsets(audio, [(at + delay, jump) for at, jump in notes])
    errors = [None if f is None else f - at - delay for f, (at, _) in zip(found, notes)]
    missing = sum(e is None for e in errors)
    wrong = [(notes[i][0], e) for i, e in enumerate(errors) if e not in (None, 0)]
    measured = [e for e in errors if e is not None]
    if missing and missing <= LOST[0]:
        what += f" ({missing} missing: bellkeys' count says {LOST[0]} of the events sent never reached it)"
    check((missing == 0 or missing <= LOST[0]) and not wrong,
          f"{name}: {len(notes) - missing} of {len(notes)} onsets{what} found, "
          + (f"every one {delay} frames after its frame" if delay else "every one at its frame")
          + f" (error {min(measured, default=0)} to {max(measured, default=0)} frames)"
          + (f"; wrong (frame, error): {wrong[:8]}" if wrong else "")
          + (f"; {missing} not found within 500 frames" if missing else ""))
    return errors


def jump(level, velocity):
    """What a step bell at `level` (of 32768) adds to the first channel as its note starts."""
    return level / 32768 * (velocity / 127) ** 2 * CC7_DEFAULT
