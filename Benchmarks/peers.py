#!/usr/bin/env python3
"""bellkeys against FluidSynth and TiMidity++ on the same MIDI, the same bells, one run.

    python3 Benchmarks/peers.py            (builds bellkeys in release mode first)
    python3 Benchmarks/peers.py --quick    (fewer workloads and repeats)
    python3 Benchmarks/peers.py --room     (also pan and reverb against FluidSynth's reverb)
    python3 Benchmarks/peers.py --no-timidity   (bellkeys and FluidSynth only)
    BELLKEYS_BIN=/path/to/bellkeys python3 Benchmarks/peers.py   (that binary, no build)

Needs Debian's fluidsynth and timidity. The peers get the bundled bells as a SoundFont built
by make-soundfont.py; every note is held for its bell's full length (8.3 s for C5 to 12.6 s for
C4), so all three renderers play the same one-shots to the end. The bells are played as
Samples/examples/plain.json has them (centred, dry, one timbre), the "dry" contenders. FluidSynth runs with its defaults (4th-order interpolation,
per-voice filter) but reverb and chorus off; TiMidity++ with its defaults and no effects.
Contenders are interleaved (A B C A B C ...) and the median of the repeats is reported.

Printed per workload and renderer: CPU seconds (user + system of the whole process, start-up
and loading included), audio seconds per CPU second, voices sounding on average, and voices
per core in real time = average voices × audio seconds per CPU second. "mixing only" takes
away what the same renderer spends on a file of the same length with no notes (start-up,
loading, writing the file; fitted as a + b × seconds from silent files of 5 s and 25 s), which
leaves the cost of the voices themselves. Outputs are checked to be the same music: length,
level (RMS within 6 dB), and the correlation of their 50 ms loudness envelopes (at least 0.8); a
renderer that fails any of these stops the script. Missing peers are installed from Debian when
run as root.

--room (issue 15) adds two contenders on every workload of 128 voices or more, interleaved with
the dry ones in the same repeats: bellkeys with every key panned (-0.6 at C4 to 0.6 at C5) and
its hall reverb at mix 0.3, and FluidSynth with its own reverb on (its default room; chorus
still off), both playing the notes after a CC91 (reverb send) of 127, without which FluidSynth's
reverb hears nothing (bellkeys' send starts at 127 anyway). Their "mixing only" takes away the dry renderer's silent-file cost (start-up,
loading, writing), not a silent file's with the reverb on: the reverb's cost is per frame, and
bellkeys' reverb sleeps on silence while FluidSynth's runs, so the reverb counts as mixing for
both. They are credited with no more audio seconds than their dry renderings (a reverb tail
costs CPU but carries no voices). A table then sets the dry ratio (bellkeys / FluidSynth, mixing
only) beside the room ratio, and says whether the room ratio on the densest workload is at
least 15; a second line gives the room figures over each contender's own silent file with its
reverb on, for comparison.
"""
import array
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tools", "python"))
import smf  # noqa: E402  (the MIDI file writer)

RATE = 48000
# The plain map: the bundled bells with no pan, reverb or velocity timbre.
PLAIN_MAP = os.path.join(ROOT, "Samples", "examples", "plain.json")


def bell_seconds():
    """{MIDI note: its bell's length in seconds}, from the plain map's files (tags 100..112 are
    notes 60..72)."""
    with open(PLAIN_MAP) as f:
        keys = json.load(f)["keys"]
    lengths = {}
    for key in keys:
        with wave.open(os.path.join(os.path.dirname(PLAIN_MAP), key["sample"])) as w:
            lengths[key["tag"] - 100 + 60] = w.getnframes() / w.getframerate()
    return lengths


BELL_SECONDS = bell_seconds()
MEAN_BELL_SECONDS = sum(BELL_SECONDS.values()) / len(BELL_SECONDS)
# The SoundFont's volume-envelope release (make-soundfont.py).
RELEASE_SECONDS = 2.0
# The dense workloads' strikes go round the 13 keys, then to the next channel: 15 channels (not
# General MIDI's channel 10, drums to the peers), so a (key, channel) pair is struck again only
# after 195 strikes. FluidSynth releases a voice when its key is struck again on its channel
# (measured: a bell struck twice 1 s apart on one channel sounds, from 4 s on, as the second
# strike alone); bellkeys lets both ring. So at densities where a pair comes round within a
# bell's length, FluidSynth plays fewer voices than the notes ask for, and it is credited with
# the voices it plays (`peer_voices`), not the notes' (`average_voices`).
CHANNELS = [c for c in range(16) if c != 9]
# Output gain each renderer applies by default. FluidSynth's synth.gain is 0.2; it stays at its
# default for timing, because FluidSynth ends quiet voices sooner at lower gain.
OUTPUT_GAIN_DB = {"fluidsynth": 20 * math.log10(0.2)}
# --room: the contenders it adds, each with its dry counterpart.
ROOM = {"bellkeys-room": "bellkeys", "fluidsynth-reverb": "fluidsynth"}
ROOM_MIN_VOICES = 128
ROOM_TARGET = 15.0
# bellkeys' hall preset: its tail reaches digital zero about 2.6 s after the input falls silent.
HALL_TAIL_SECONDS = 3.0


def write_midi(path, notes, ppq=960, tempo=500000, seconds=None, controllers=(), lengths=None):
    """notes: (start_seconds, note, velocity, channel); each is held for its bell's length
    (`lengths`: {note: seconds}, BELL_SECONDS unless given). With `seconds`, the file lasts that
    long (end of track) even without notes. `controllers`: (number, value) on every channel at
    the start, before any note."""
    lengths = lengths or BELL_SECONDS
    events = [(0, -1, smf.message(0xB0 | channel, number, value)) for number, value in controllers for channel in range(16)]
    if seconds is not None:
        events.append((round(seconds * 2 * ppq), 0, smf.meta(0x01, b"end")))
    for start, note, velocity, channel in notes:
        events.append((round(start * 2 * ppq), 1, smf.message(0x90 | channel, note, velocity)))
        events.append((round((start + lengths[note]) * 2 * ppq), 0, smf.message(0x80 | channel, note, 0)))
    events.sort(key=lambda e: (e[0], e[1]))
    smf.write(path, [(tick, data) for tick, _, data in events], division=ppq, tempo=tempo)


def workloads(quick, room=False):
    keys = list(range(60, 73))
    loads = {
        "scale": [(i * 0.5, keys[i], 100, 0) for i in range(13)],
        "chords": [(c * 2.0, k, 110, 0) for c in range(5) for k in keys],
    }
    sizes = [16, 64, 128, 1024] if not quick else [64, 1024]
    if room and max(sizes) < ROOM_MIN_VOICES:
        sizes.append(ROOM_MIN_VOICES)
    for voices in sizes:
        # A strike every (mean length / voices) s over the 13 keys in turn: `voices` sound on
        # average once the first bells have rung out.
        seconds = 30.0
        step = MEAN_BELL_SECONDS / voices
        count = int((seconds - max(BELL_SECONDS.values())) / step)
        loads[f"dense-{voices}"] = [(i * step, keys[(i * 5) % 13], 64 + (i * 7) % 64, CHANNELS[(i // 13) % len(CHANNELS)])
                                    for i in range(count)]
    return loads


def notes_end(notes, lengths=None):
    """When the last note's bell has rung out, in seconds."""
    lengths = lengths or BELL_SECONDS
    return max(s + lengths[n] for s, n, _, _ in notes)


def average_voices(notes, lengths=None):
    """Notes sounding on average, each to its bell's end (`lengths` as in write_midi)."""
    if not notes:
        return 0.0
    lengths = lengths or BELL_SECONDS
    return sum(lengths[n] for _, n, _, _ in notes) / notes_end(notes, lengths)


def peer_voices(notes, lengths=None):
    """Voices sounding on average in FluidSynth: each rings to its bell's end, or until its key
    is struck again on its channel and then over the 2 s release, whichever is sooner."""
    if not notes:
        return 0.0
    lengths = lengths or BELL_SECONDS
    last, total = {}, 0.0
    for s, n, _, c in sorted(notes, reverse=True):
        again = last.get((n, c))
        total += min(lengths[n], again - s + RELEASE_SECONDS) if again is not None else lengths[n]
        last[(n, c)] = s
    return total / notes_end(notes, lengths)


def is_peer(contender):
    """Whether a contender is FluidSynth or TiMidity++ (they add a release after the last note)."""
    return not contender.startswith("bellkeys")


def fluidsynth_command(font, midi, out, polyphony, reverb=0):
    """FluidSynth rendering `midi` with `font` to a 16-bit WAV at RATE: its defaults, chorus
    off, reverb on or off, one core, `polyphony` voices (at most 65535)."""
    return ["fluidsynth", "-ni", "-q", "-F", out, "-T", "wav", "-O", "s16", "-r", str(RATE),
            "-o", f"synth.reverb.active={reverb}", "-o", "synth.chorus.active=0",
            "-o", f"synth.polyphony={min(65535, polyphony)}", "-o", "synth.cpu-cores=1", font, midi]


def run(command, ok=(0,)):
    """Runs command; returns (cpu_seconds, max_rss_kib). Any exit status outside `ok` stops the
    script."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) not in ok:
        sys.exit(f"failed: {' '.join(command)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def read_stereo(path):
    """(left, right, rate); a mono file gives the same samples twice."""
    with wave.open(path) as w:
        assert w.getsampwidth() == 2
        channels, frames = w.getnchannels(), w.readframes(w.getnframes())
        rate = w.getframerate()
    data = array.array("h", frames)
    return data[::channels], data[min(1, channels - 1)::channels], rate


def last_sound(samples):
    """The index just past the last non-zero sample (0 for silence)."""
    for i in range(len(samples) - 1, -1, -1):
        if samples[i]:
            return i + 1
    return 0


def mono(left, right):
    """The average of the two channels (exactly the first where they are equal, as in every dry
    rendering here: pan and FluidSynth's reverb are what make them differ)."""
    if left == right:
        return left
    return array.array("h", ((a + b) // 2 for a, b in zip(left, right)))


def rms(samples):
    return math.sqrt(sum(x * x for x in samples) / max(1, len(samples))) / 32768


def envelope(samples, rate, window=0.05):
    n = int(rate * window)
    return [math.sqrt(sum(x * x for x in samples[i:i + n]) / n) for i in range(0, len(samples) - n, n)]


def correlation(a, b):
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    ma, mb = sum(a) / n, sum(b) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    va = math.sqrt(sum((x - ma) ** 2 for x in a))
    vb = math.sqrt(sum((y - mb) ** 2 for y in b))
    return cov / (va * vb) if va and vb else 0.0


def ensure_peers():
    """Installs the peers (and GNU time, for FluidSynth's peak memory) from Debian when they are
    missing and this is root, so that one command rebuilds the table on a fresh machine."""
    missing = [p for p, path in (("fluidsynth", "fluidsynth"), ("timidity", "timidity"), ("time", "/usr/bin/time"))
               if not shutil.which(path)]
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        sys.exit(f"missing: {' '.join(missing)}; install them: sudo apt-get install {' '.join(missing)}")
    print(f"installing {' '.join(missing)} from Debian", file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, check=True, env=env,
                   stdout=subprocess.DEVNULL)


def room_table(results, room_loads, baseline):
    """The dry ratio beside the room ratio (issue 15), voices per core in real time."""
    def ratio(x, y):
        return x / y if x == x and y == y and y > 0 else float("nan")

    def figure(x):
        return f"{x:.0f}" if x == x else "-"

    def times(x):
        return f"{x:.1f}x" if x == x else "-"

    print()
    print("room (issue 15): bellkeys with pan on every key (-0.6..0.6) and its hall reverb (mix 0.3) against "
          "FluidSynth with its reverb on (chorus off); voices per core in real time")
    header = (f"{'workload':<12}{'figure':<15}{'bellkeys dry':>13}{'FluidSynth dry':>16}{'dry ratio':>11}"
              f"{'bellkeys room':>15}{'FluidSynth reverb':>19}{'room ratio':>12}")
    print(header)
    def per_core(name, n, index):
        """Voices per core in real time: the renderer's own voices × its audio s per CPU s."""
        return results[(name, n)][0] * results[(name, n)][index]

    for name in room_loads:
        for label, index in (("mixing only", 2), ("whole process", 1)):
            bd, fd = per_core(name, "bellkeys", index), per_core(name, "fluidsynth", index)
            br, fr = per_core(name, "bellkeys-room", index), per_core(name, "fluidsynth-reverb", index)
            print(f"{name:<12}{label:<15}{figure(bd):>13}{figure(fd):>16}{times(ratio(bd, fd)):>11}"
                  f"{figure(br):>15}{figure(fr):>19}{times(ratio(br, fr)):>12}")
    top = max(room_loads, key=lambda k: results[(k, "bellkeys")][0])
    v = results[(top, "bellkeys")][0]
    fv = results[(top, "fluidsynth-reverb")][0]
    room_ratio = ratio(per_core(top, "bellkeys-room", 2), per_core(top, "fluidsynth-reverb", 2))
    own = ratio(v * results[(top, "bellkeys-room", "own")], fv * results[(top, "fluidsynth-reverb", "own")])
    whole = ratio(per_core(top, "bellkeys-room", 1), per_core(top, "fluidsynth-reverb", 1))
    # Without a mixing-only figure (bellkeys' mixing within the noise of its silent file's cost),
    # the whole-process ratio decides: taking each renderer's fixed costs away raises bellkeys'
    # rate by more than FluidSynth's (bellkeys' fixed costs are about half its run on dense-1024,
    # FluidSynth's about 5 %), so it is a lower bound.
    judged = room_ratio if room_ratio == room_ratio else whole
    verdict = "yes" if judged >= ROOM_TARGET else ("no" if judged == judged else "not measured")
    how = "" if room_ratio == room_ratio else f" (mixing only not measured: judged on the whole process, {times(whole)}, a lower bound)"
    print(f"room ratio on the densest workload ({top}, {v:.0f} voices), mixing only: {times(room_ratio)} "
          f"(dry {times(ratio(per_core(top, 'bellkeys', 2), per_core(top, 'fluidsynth', 2)))}); "
          f"at least {ROOM_TARGET:.0f}x: {verdict}{how}")
    cost = {n: (baseline[n][1] - baseline[ROOM[n]][1]) * 1000 for n in ROOM}
    print(f"for comparison, over each room contender's own silent file with its reverb on: room ratio {times(own)} "
          f"(bellkeys {figure(v * results[(top, 'bellkeys-room', 'own')])}, FluidSynth "
          f"{figure(fv * results[(top, 'fluidsynth-reverb', 'own')])} voices/core); the reverb on silence costs "
          f"bellkeys {cost['bellkeys-room']:+.1f} ms and FluidSynth {cost['fluidsynth-reverb']:+.1f} ms "
          f"per audio second")


def main(extension=None):
    """Runs the benchmark. `extension` (Benchmarks/transposed-peers.py) adds workloads of its
    own, each with its own contenders, note lengths and voice counting, timed and checked in
    this same run after the dry ones: it has `prepare(work, bellkeys, quick)`, which writes its
    files and returns all its contenders; `commands(midi, out, voices)`, {contender: command};
    `workloads(quick)`, {name: (notes, its contenders in order, the first its reference)};
    `lengths`, {note: seconds}; `played(contender, notes)`, the notes that contender sounds on
    average; and `report(results, top)`, which prints its own table after the dry summary."""
    quick = "--quick" in sys.argv
    room = "--room" in sys.argv
    repeats = 3 if not quick else 1
    ensure_peers()
    # BELLKEYS_BIN: an already built bellkeys (no build); --no-build: the one in .build/release.
    bellkeys = os.environ.get("BELLKEYS_BIN")
    if bellkeys:
        bellkeys = os.path.abspath(bellkeys)
        if not os.access(bellkeys, os.X_OK):
            sys.exit(f"BELLKEYS_BIN={bellkeys} is not an executable")
    else:
        if "--no-build" not in sys.argv:
            subprocess.run(["swift", "build", "-c", "release", "--product", "bellkeys"], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)
        bellkeys = os.path.join(ROOT, ".build", "release", "bellkeys")
    work = tempfile.mkdtemp(prefix="bellkeys-bench-")
    sf2 = os.path.join(work, "bells.sf2")
    subprocess.run([sys.executable, os.path.join(HERE, "make-soundfont.py"), PLAIN_MAP, sf2], check=True)
    with open(PLAIN_MAP) as f:
        bell_map = json.load(f)
    bell_map["noteOff"] = "ring"
    bell_map["polyphony"] = 65536
    for key in bell_map["keys"]:
        key["sample"] = os.path.normpath(os.path.join(os.path.dirname(PLAIN_MAP), key["sample"]))
    bench_map = os.path.join(work, "bench.json")
    with open(bench_map, "w") as f:
        json.dump(bell_map, f)
    # --room: the same bells, panned from -0.6 (C4) to 0.6 (C5) in file order, in the hall.
    room_map = os.path.join(work, "room.json")
    room_bells = json.loads(json.dumps(bell_map))
    last = len(room_bells["keys"]) - 1
    for i, key in enumerate(room_bells["keys"]):
        key["pan"] = round(-0.6 + 1.2 * i / last, 6)
    room_bells["reverb"] = "hall"
    room_bells["reverbMix"] = 0.3
    with open(room_map, "w") as f:
        json.dump(room_bells, f)
    timidity_cfg = os.path.join(work, "timidity.cfg")
    with open(timidity_cfg, "w") as f:
        f.write(f"soundfont {sf2}\n")

    def commands(midi, out, voices):
        limit = str(max(256, voices * 2))

        def fluidsynth(reverb):
            return fluidsynth_command(sf2, midi, out, int(limit), reverb)
        extra = extension.commands(midi, out, voices) if extension else {}
        return {
            **extra,
            "bellkeys": [bellkeys, "render", midi, "-o", out, "--map", bench_map, "--quiet"],
            "fluidsynth": fluidsynth(0),
            "timidity": ["timidity", "-c", timidity_cfg, "-Ow", "-o", out, "-s", str(RATE), "-p", limit,
                         "-EFreverb=0", "-EFchorus=0", midi],
            "bellkeys-room": [bellkeys, "render", midi, "-o", out, "--map", room_map, "--quiet"],
            "fluidsynth-reverb": fluidsynth(1),
        }

    names = ["bellkeys", "fluidsynth"] + ([] if "--no-timidity" in sys.argv else ["timidity"])
    extra_names = extension.prepare(work, bellkeys, quick) if extension else []
    assert not set(extra_names) & set(names + list(ROOM)), "an extension's contender has a built-in one's name"
    all_names = names + (list(ROOM) if room else []) + extra_names
    # Each renderer's cost of a file with no notes: a + b × seconds.
    baseline = {}
    for n in all_names:
        points = []
        for seconds in (5.0, 25.0):
            midi = os.path.join(work, f"silent-{seconds:.0f}.mid")
            write_midi(midi, [], seconds=seconds)
            out = os.path.join(work, f"silent-{n}.wav")
            # bellkeys exits with 3 when the file it wrote is silent because no note struck a bell.
            cpu = statistics.median(run(commands(midi, out, 1)[n], ok=(0, 3))[0] for _ in range(max(3, repeats)))
            points.append((seconds, cpu))
        (s0, c0), (s1, c1) = points
        slope = (c1 - c0) / (s1 - s0)
        baseline[n] = (c0 - slope * s0, slope)
    print(f"{'workload':<18}{'renderer':<21}{'voices':>8}{'audio s':>9}{'CPU s':>9}{'audio s/CPU s':>15}"
          f"{'voices/core':>13}{'mixing only':>13}{'envelope r':>12}{'level dB':>10}")
    results = {}
    different = []
    room_loads = []
    plan = [(name, notes, BELL_SECONDS, names) for name, notes in workloads(quick, room).items()]
    if extension:
        plan += [(name, notes, extension.lengths, own) for name, (notes, own) in extension.workloads(quick).items()]
    for name, notes, lengths, base in plan:
        midi = os.path.join(work, name + ".mid")
        write_midi(midi, notes, lengths=lengths)
        voices = average_voices(notes, lengths)
        contenders = list(base)
        midis = {n: midi for n in base}
        if room and base is names and voices >= ROOM_MIN_VOICES:
            contenders += list(ROOM)
            room_loads.append(name)
            # The room contenders play the same notes after CC91 (reverb send) 127: FluidSynth
            # 2.3's channels start at CC91 0, which leaves its reverb running on nothing (measured
            # on two bells: left minus right 86 dB under the mix, against 17 dB with CC91 127);
            # bellkeys' start at 127, so to bellkeys the event changes nothing (the same bytes).
            room_midi = os.path.join(work, name + "-room.mid")
            write_midi(room_midi, notes, controllers=[(91, 127)])
            midis.update({n: room_midi for n in ROOM})
        cpu = {n: [] for n in contenders}
        outs = {n: os.path.join(work, f"{name}-{n}.wav") for n in contenders}
        for _ in range(repeats):
            for n in contenders:
                cpu[n].append(run(commands(midis[n], outs[n], int(voices) + 1)[n])[0])
        reference = None
        dry = {}
        for n in contenders:
            left, right, rate = read_stereo(outs[n])
            samples = mono(left, right)
            seconds = len(samples) / rate
            env = envelope(samples, rate)
            level = rms(samples)
            if level < 1e-4:
                sys.exit(f"{n} rendered silence for {name}")
            if reference is None:
                reference, reference_seconds, reference_level, reference_name = env, seconds, level, n
                # The reference itself: as long as its notes (bellkeys renders to the last bell's
                # end; the peers add their release).
                end = notes_end(notes, lengths)
                if not -0.1 <= seconds - end <= 2.5:
                    different.append(f"{n}'s rendering of {name} lasts {seconds:.2f} s, its notes {end:.2f} s")
            r = correlation(reference, env)
            difference = (20 * math.log10(level / reference_level) - OUTPUT_GAIN_DB.get(n.split("-")[0], 0)
                          + OUTPUT_GAIN_DB.get(reference_name.split("-")[0], 0))
            if n not in ROOM:
                dry[n] = (seconds, samples)
                # The same music as the reference (bellkeys on the dry workloads, on an
                # extension's its first contender): as long (a peer lasts up to 2.5 s longer than
                # bellkeys, its 2 s release after the last note-off, and not less; two of a kind
                # within 0.5 s), as loud within 6 dB (after each renderer's own output gain), and
                # the same loudness envelope.
                low, high = {(False, True): (0, 2.5), (True, False): (-2.5, 0)}.get(
                    (is_peer(reference_name), is_peer(n)), (-0.5, 0.5))
                checks = (
                    (not low <= seconds - reference_seconds <= high, f"lasts {seconds:.2f} s, {reference_name} {reference_seconds:.2f} s"),
                    (abs(difference) > 6, f"is {difference:+.1f} dB from {reference_name}"),
                    (r < 0.8, f"has a loudness envelope correlating at only {r:.2f} with {reference_name}'s"))
            else:
                # The room contenders, checked against the same dry bellkeys reference with two
                # checks relaxed, and two added that the pan and the reverb are really on:
                # - length: at least the renderer's own dry rendering, and up to the peers' 2.5 s
                #   plus the hall's tail (bellkeys counts the tail to digital zero in its length);
                # - envelope correlation at least 0.6, not 0.8: a hall (RT60 about 1.6 s) at mix
                #   0.3 smears the 50 ms envelope and stretches its end, so the curves differ
                #   where the music does not;
                # - level: the same 6 dB (the wet send adds a little; a reverb louder or quieter
                #   than that would be a different mix, not the same music in a room);
                # - added: the two channels differ (pan for bellkeys; FluidSynth's bells have no
                #   pan, so there it is its reverb's stereo), and bellkeys' room rendering rings on
                #   after its dry one ends (the reverb tail: bellkeys renders until the room is
                #   digitally silent; the bells' own last second is quiet since 0.3.0, -55 dB
                #   and falling, so the tail is measured by where the last non-zero sample is,
                #   not by its level; a file that lasts longer than its notes holds the tail).
                own_seconds, own_samples = dry[ROOM[n]]
                side = rms(array.array("h", (a - b for a, b in zip(left, right)))) / max(level, 1e-12)
                checks = (
                    (not (seconds >= own_seconds - 0.01 and seconds - reference_seconds <= 2.5 + HALL_TAIL_SECONDS),
                     f"lasts {seconds:.2f} s, its dry rendering {own_seconds:.2f} s, bellkeys {reference_seconds:.2f} s"),
                    (abs(difference) > 6, f"is {difference:+.1f} dB from bellkeys"),
                    (r < 0.6, f"has a loudness envelope correlating at only {r:.2f} with bellkeys'"),
                    (side < 0.01, f"has (almost) the same left and right channels (side/mid {side:.4f})"),
                    (n == "bellkeys-room" and (last_sound(samples) - last_sound(own_samples)) / rate < 0.1,
                     f"has no reverb tail after its dry rendering's last sound "
                     f"({(last_sound(samples) - last_sound(own_samples)) / rate:.2f} s)"))
            problems = [text for bad, text in checks if bad]
            if problems:
                different.append(f"{n}'s rendering of {name} is not the same music: it " + "; ".join(problems))
            c = statistics.median(cpu[n])
            speed = seconds / c
            # A room contender: the dry renderer's silent-file cost (the reverb counts as mixing),
            # and no more audio seconds than its dry rendering (the tail carries no voices).
            a, b = baseline[ROOM.get(n, n)]
            credited = min(seconds, dry[ROOM[n]][0]) if n in ROOM else seconds
            mixing = c - (a + b * seconds)
            # Where the voices cost less than a quarter of the process, their share is lost in
            # the noise of the rest: no mixing-only figure.
            meaningful = mixing > 0.25 * c
            # The voices this renderer plays: FluidSynth's end when their key comes round again
            # on their channel (see CHANNELS). TiMidity++'s are counted as the notes ask
            # (its handling of a key struck again was not measured: an upper bound).
            if base is not names:
                played = extension.played(n, notes)
            else:
                played = peer_voices(notes) if n.startswith("fluidsynth") else voices
            results[(name, n)] = (played, credited / c, credited / mixing if meaningful else float("nan"))
            if n in ROOM:
                a_own, b_own = baseline[n]
                own_mixing = c - (a_own + b_own * seconds)
                results[(name, n, "own")] = credited / own_mixing if own_mixing > 0.25 * c else float("nan")
            mixing_text = f"{played * credited / mixing:>13.0f}" if meaningful else f"{'-':>13}"
            print(f"{name:<18}{n:<21}{played:>8.1f}{seconds:>9.2f}{c:>9.3f}{speed:>15.1f}{played * credited / c:>13.0f}"
                  f"{mixing_text}{r:>12.3f}{20 * math.log10(level):>10.1f}", flush=True)
    if different:
        sys.exit("\n".join(different))
    dense = [k for k in results if k[0].startswith("dense-") and k[1] == "bellkeys"]
    top = max(dense, key=lambda k: int(k[0].split("-")[1]))[0]
    b = results[(top, "bellkeys")]
    f_ = results[(top, "fluidsynth")]
    t = results.get((top, "timidity"))
    print()
    for label, k in (("whole process", 1), ("mixing only", 2)):
        line = (f"maximum real-time polyphony per core ({top}), {label}: bellkeys {b[0] * b[k]:.0f}, "
                f"FluidSynth {f_[0] * f_[k]:.0f}")
        if t:
            line += f", TiMidity++ {t[0] * t[k]:.0f}"
        line += f"; bellkeys / FluidSynth {b[0] * b[k] / (f_[0] * f_[k]):.1f}x"
        if t:
            line += f", bellkeys / TiMidity++ {b[0] * b[k] / (t[0] * t[k]):.1f}x"
        print(line)
    if room:
        room_table(results, room_loads, baseline)
    if extension:
        extension.report(results, top)

    # Start-up and memory: bellkeys reports its own load time and peak resident memory
    # (VmHWM); FluidSynth's peak is measured by GNU time, whose own footprint is tiny (the
    # rusage of a child forked from Python would include Python's).
    loads, peaks = [], []
    for _ in range(5):
        out = subprocess.run([bellkeys, "render", os.path.join(ROOT, "Samples", "demo.mid"), "-o",
                              os.path.join(work, "demo.wav")], capture_output=True, text=True, check=True).stdout
        loads.append(float(out.split("bank loaded in ")[1].split(" ms")[0]))
        peaks.append(float(out.split("peak memory ")[1].split(" MiB")[0]))
    empty = os.path.join(work, "empty.mid")
    write_midi(empty, [])
    timing = os.path.join(work, "time.txt")
    fs_peaks, fs_walls = [], []
    for _ in range(5):
        subprocess.run(["/usr/bin/time", "-f", "%M %e", "-o", timing, "fluidsynth", "-ni", "-q", "-F",
                        os.path.join(work, "e.wav"), sf2, empty], check=True, capture_output=True)
        kib, wall = open(timing).read().split()[-2:]
        fs_peaks.append(int(kib) / 1024)
        fs_walls.append(float(wall) * 1000)
    print(f"default bank load-to-ready, bellkeys: {statistics.median(loads):.1f} ms (median of 5); "
          f"peak resident memory rendering demo.mid: {statistics.median(peaks):.1f} MiB")
    print(f"FluidSynth loading the same bells as SF2 and rendering nothing: {statistics.median(fs_walls):.0f} ms wall, "
          f"peak resident memory {statistics.median(fs_peaks):.1f} MiB")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
