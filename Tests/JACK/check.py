#!/usr/bin/env python3
"""Checks bellkeys as a JACK client against its own offline render (see Tests/JACK/run).

    check.py TEST...     onsets, order-after, dynamics, bufsize, server-gone

Needs a JACK server named in JACK_DEFAULT_SERVER at 48 kHz with 64-frame periods (Tests/JACK/run
starts one), the probe at .build-jack/probe and bellkeys at .build/release/bellkeys (or
BELLKEYS=PATH). Each test's files go to .build-jack/TEST/.

How: a test writes a map of synthetic bells, MIDI events at frames counted from T0 as the probe's
schedule, and the same events as a Standard MIDI File (24000 ticks per quarter at the default
tempo: one tick is one frame at 48 kHz). bellkeys plays on JACK while the probe (probe.c) sends
the schedule from a client that runs before bellkeys, each event at its frame's offset in its
cycle, and records bellkeys' outputs from T0 on. `bellkeys render` renders the MIDI file with the
same map. The engine is the same, so the recording must equal the render sample for sample.

Onsets are measured on bells that start with a constant level: a note starts where the first
channel jumps up by at least 40 % of what its velocity makes of that level.

Every check prints one line, "ok" or "FAIL", with the measured numbers; the exit status is the
number of failures (0: all passed).

The parts, beside this file: common.py (settings, the ok/FAIL line), files.py (bells, map,
schedule, MIDI file), takes.py (a take and its render), analysis.py (comparing, onsets),
servers.py (servers and bellkeys outside a take), and the tests in onset_tests.py,
sound_tests.py, session_tests.py and server_tests.py.
"""
import os
import signal
import sys
import time

# The parts shared with other harnesses (smf, bells) are in Tools/python.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tools", "python"))
import common  # noqa: E402
from common import PIPEWIRE_PID, check  # noqa: E402
from onset_tests import test_bufsize, test_channels, test_onsets, test_order_after  # noqa: E402
from server_tests import test_pipewire_gone, test_ports, test_server_gone, test_stall  # noqa: E402
from session_tests import test_demo, test_keyboard, test_rt_allocations, test_session, test_sfz_reload  # noqa: E402
from sound_tests import test_classroom, test_dynamics, test_instrument, test_room, test_sets, test_transpose  # noqa: E402

TESTS = {"ports": test_ports, "onsets": test_onsets, "channels": test_channels, "order-after": test_order_after, "dynamics": test_dynamics,
         "room": test_room, "sets": test_sets, "transpose": test_transpose, "instrument": test_instrument, "classroom": test_classroom,
         "bufsize": test_bufsize, "session": test_session, "sfz-reload": test_sfz_reload, "keyboard": test_keyboard,
         "rt-allocations": test_rt_allocations, "stall": test_stall, "server-gone": test_server_gone, "pipewire-gone": test_pipewire_gone,
         "demo": test_demo}

if __name__ == "__main__":
    # SIGTERM (from run's traps) unwinds like an error: bellkeys and any server of ours are stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = os.environ.get("JACK_DEFAULT_SERVER", "")
    if not PIPEWIRE_PID and server in ("", "default"):
        sys.exit("check.py: set JACK_DEFAULT_SERVER to a test server's name (Tests/JACK/run does); "
                 "the tests never use the default server")
    unknown = [t for t in sys.argv[1:] if t not in TESTS]
    if unknown or not sys.argv[1:]:
        sys.exit(f"check.py: tests are {', '.join(TESTS)}" + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    for test in sys.argv[1:]:
        started = time.monotonic()
        try:
            TESTS[test]()
        except Exception as error:      # a missing file, a failed render, a probe that hung
            check(False, f"{test}: could not be checked: {type(error).__name__}: {error}")
        print(f"      {test}: {time.monotonic() - started:.1f} s", flush=True)
    sys.exit(min(common.failures, 100))
