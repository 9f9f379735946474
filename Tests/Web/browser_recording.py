"""Tests/Web/browser's recording: the onsets bellkeys' --record holds, matched to the strikes the
browsers made (one onset each, at the jump its velocity gives), and the checks made of them.
"""

import numpy as np

from browser_harness import R, RATE, jump, level_of, read_float_wav


# MARK: The recording

def onsets_of(recording, threshold):
    """Frames where the first channel jumps up by more than `threshold`, with the jump."""
    x = recording[:, 0].astype(np.float64)
    d = np.diff(np.concatenate([[0.0], x]))
    frames = np.nonzero(d > threshold)[0]
    return [(int(f), float(d[f])) for f in frames]


def match_strikes(expected, onsets):
    """expected: [{label, strikes: [(note, velocity)], t (page ms)}] in the order played. Matches
    them to the onsets in order: one onset per strike, or one for two struck in the same frame.
    Returns, per entry, the onsets taken ([(frame, jump)]) and the jumps expected."""
    out, k = [], 0
    for e in expected:
        want = [jump(n, v, e.get("level", level_of)) for n, v in e["strikes"]]
        taken = []
        if len(want) == 1:
            if k < len(onsets):
                taken = [onsets[k]]
                k += 1
        else:
            total = sum(want)
            if k < len(onsets) and abs(onsets[k][1] - total) <= 0.01 * total:
                taken = [onsets[k]]
                k += 1
            else:
                taken = onsets[k:k + len(want)]
                k += len(taken)
        out.append(dict(entry=e, want=want, taken=taken))
    return out, onsets[k:]


def amplitudes_ok(m):
    """Whether the onsets taken carry the jumps expected, each within 1 % (two struck at once:
    one onset of their sum, or two of theirs in either order)."""
    want, got = m["want"], [j for _, j in m["taken"]]
    if len(got) == 1 and len(want) > 1:
        return abs(got[0] - sum(want)) <= 0.01 * sum(want)
    if len(got) != len(want):
        return False
    for order in ([0, 1], [1, 0]) if len(want) == 2 else ([0],):
        if all(abs(got[i] - want[j]) <= 0.01 * want[j] for i, j in zip(range(len(got)), order)):
            return True
    return False


def check_recording(bellkeys, expected, spacing_taps, spacing_sends, damp_check, ada_strikes):
    """The checks of what bellkeys recorded against what the browsers played."""
    recording = read_float_wav(bellkeys.recording)
    both_equal = recording.shape[1] == 2 and bool(np.array_equal(recording[:, 0], recording[:, 1]))
    threshold = 0.4 * min(jump(n, v, e.get("level", level_of)) for e in expected for n, v in e["strikes"])
    onsets = onsets_of(recording, threshold)
    matched, extra = match_strikes(expected, onsets)

    def described(m):
        return (f"{m['entry']['label']}: " + "+".join(f"{j:.4f}" for _, j in m["taken"]) + " at "
                + ",".join(f"{f / RATE:.3f}s" for f, _ in m["taken"]) + " (expected " + "+".join(f"{w:.4f}" for w in m["want"]) + ")")

    taps_m = [m for m in matched if m["entry"]["label"].startswith("tap ") or m["entry"]["label"].startswith("D4")]
    R.check("heard", len(taps_m) == len(spacing_taps) + 1 and all(amplitudes_ok(m) for m in taps_m) and both_equal,
            f"the recording ({len(recording) / RATE:.2f} s, {recording.shape[1]} channels, equal: {both_equal}) holds "
            + "; ".join(described(m) for m in taps_m) + " (each onset's jump within 1 % of level/32768 (v/127)^2 (100/127)^2)")
    # Spacing: the onsets of the tap test against the taps as the page stamped them.
    pairs = []
    for a, b in zip(taps_m[:len(spacing_taps)], taps_m[1:len(spacing_taps)]):
        if a["taken"] and b["taken"] and a["entry"]["t"] is not None and b["entry"]["t"] is not None:
            pairs.append(((b["taken"][0][0] - a["taken"][0][0]) / RATE * 1000, b["entry"]["t"] - a["entry"]["t"]))
    sends = [b - a for a, b in zip(spacing_sends, spacing_sends[1:])]
    R.check("spacing", len(pairs) == len(spacing_taps) - 1 and all(abs(s - p) <= 20 for s, p in pairs),
            "onsets apart (ms) vs the taps (the page's event times): " + ", ".join(f"{s:.1f} vs {p:.1f}" for s, p in pairs)
            + " (within 20 ms); the page sent their strikes " + ", ".join(f"{d:.1f}" for d in sends) + " ms apart")
    if damp_check:
        m = next((m for m in matched if m["entry"]["label"].startswith("D4")), None)
        if m and m["taken"]:
            f = m["taken"][0][0]
            full = float(recording[f + int(0.06 * RATE), 0])
            late = float(recording[f + int(0.23 * RATE), 0])
            gap = (damp_check["damp"].get("page_t", 0) - damp_check["strike"].get("page_t", 0))
            R.check("stop strip", abs(full - m["want"][0]) <= 0.01 * m["want"][0] and abs(late) <= 0.001,
                    f"D4 struck at its top, its stop strip touched {gap:.0f} ms later: 60 ms in it holds {full:.4f} "
                    f"(expected {m['want'][0]:.4f}); 230 ms in, before its 250 ms hold would end, {late:.5f} (damped: 0)")
        else:
            R.check("stop strip", False, "D4's strike is not in the recording")
    swipe_m = next((m for m in matched if m["entry"]["label"] == "the swipe's strike"), None)
    if swipe_m and swipe_m["taken"]:
        f = swipe_m["taken"][0][0]
        late = float(recording[f + int(0.23 * RATE), 0])
        R.check("swipe heard", amplitudes_ok(swipe_m) and abs(late) <= 0.001,
                described(swipe_m) + f"; 230 ms in, before its 250 ms hold would end, {late:.5f} (damped by the swipe: 0)")
    else:
        R.check("swipe heard", False, "the swipe's strike is not in the recording" if swipe_m else "no swipe made")
    two_m = next((m for m in matched if m["entry"]["label"] == "two fingers"), None)
    R.check("multi-touch heard", two_m is not None and amplitudes_ok(two_m) and (len(two_m["taken"]) == 1 or
            abs(two_m["taken"][1][0] - two_m["taken"][0][0]) <= 0.05 * RATE),
            described(two_m) if two_m else "not matched")
    follow_m = next((m for m in matched if m["entry"]["label"] == "the follow-along's tap"), None)
    R.check("follow heard", follow_m is not None and amplitudes_ok(follow_m),
            described(follow_m) if follow_m else "the follow-along's tap was not made")
    set_m = next((m for m in matched if m["entry"]["label"] == "the set Five's C4"), None)
    R.check("set heard", set_m is not None and amplitudes_ok(set_m),
            described(set_m) + " (Five's C4 is 12288/32768; Steps' would be 4096)" if set_m else "no tap after the set changed")
    web_m = next((m for m in matched if m["entry"]["label"].startswith("WebKit")), None)
    R.check("webkit heard", web_m is not None and amplitudes_ok(web_m),
            described(web_m) if web_m else "no WebKit strike to hear")
    R.check("nothing else", not extra and ada_strikes == sum(len(e["strikes"]) for e in expected if e.get("phone")),
            f"{len(onsets)} onsets in the recording for {sum(len(e['strikes']) for e in expected)} strikes; left over: "
            f"{[(round(f / RATE, 3), round(j, 4)) for f, j in extra]}; the teacher counted {ada_strikes} strikes from Ada "
            f"(she made {sum(len(e['strikes']) for e in expected if e.get('phone'))})")
