#!/usr/bin/env python3
"""Transposed voices against FluidSynth (issue 26), in the same run as peers.py's dry workloads.

    python3 Benchmarks/transposed-peers.py            (builds bellkeys in release mode first)
    python3 Benchmarks/transposed-peers.py --quick    (fewer dry workloads, one repeat)
    python3 Benchmarks/transposed-peers.py --no-timidity   (peers.py's dry runs without TiMidity++)
    BELLKEYS_BIN=/path/to/bellkeys python3 Benchmarks/transposed-peers.py

The issue's figure: "at least 10x FluidSynth's voices per core (at its default interpolation,
reverb and chorus off) on a dense workload where no note is at its sample's pitch, mono and
stereo samples, reported at each quality level. Today's dry workloads measure about 58x
FluidSynth; report those beside them."

This runs Benchmarks/peers.py (its options, dry workloads and contenders, timing, and checks that
every output is the same music) with two more workloads, `transposed-mono` and
`transposed-stereo`: the same notes on two forms of the same bells, each with its own
contenders, interleaved and timed as peers.py times its own, after them.

- The 13 bundled bells, each mapped over 9 keys (bell n of C4..C5 over keys 6+9n..14+9n) with
  its root key (the key where it plays at its own pitch) 5 keys above the range's bottom for
  C4, D4, E4, ... and 2 above it for C#4, D#4, ...; no note is at a root key, so every note is
  transposed, by -5..-1 and +1..+3 semitones or by -2..-1 and +1..+6. Each note is held for its
  bell's length at that pitch (the bell's length x 2^(-semitones/12)); no loop.
- Mono: the bells as they are. Stereo: stand-ins made from each bell, 16-bit stereo WAV, left the
  bell, right the bell 1 ms (48 frames) later. FluidSynth gets each form as a SoundFont (the
  stereo one a linked pair per bell, sample types left 4 and right 2 naming each other in
  sampleLink, SoundFont 2.04 section 7.10, the zones panned -500 and 500 so each side plays in
  its own channel; 2 s release as make-soundfont.py); bellkeys as an SFZ file, one <region> per
  bell: `sample=... lokey= hikey= pitch_keycenter= loop_mode=no_loop ampeg_release=2`.
- The notes: peers.py's dense-1024 construction over the 104 played keys (a strike every
  mean transposed length / 1024 s, for as long as dense-1024 strikes, 17.4 s; keys in steps of 5
  round the 104, velocities 64..127, 15 channels in turn), so hundreds of notes sound on average
  (about 530, 1,030 at the most). No key comes round again on its channel while it rings, so
  FluidSynth plays every note to its end, as bellkeys does.
- Contenders, on each form: fluidsynth-FORM, FluidSynth at its defaults (4-point interpolation,
  per-voice filter) with reverb and chorus off, its polyphony at least the most notes sounding
  at once (two voices each for stereo); bellkeys-Q-FORM, bellkeys at --quality Q (good, fast,
  best), `bellkeys_command`:

      $BELLKEYS_BIN render --map transposed-FORM.sfz --quality Q --polyphony 65536 --quiet -o OUT.wav IN.mid

  Each bellkeys contender is first tried on one note; one that fails is left out, with a line
  saying why (all are, until pitched playback and SFZ maps land), and FluidSynth still runs. A
  form's reference for the same-music checks is bellkeys-good-FORM when it runs, else
  fluidsynth-FORM (then checked only against its notes' length).

Counting. FluidSynth plays a stereo sample as two voices (one per zone of the linked pair);
bellkeys plays it as one voice holding two channels. The 10x figure compares notes sounding per
core (a stereo note is one note, whoever plays it), each renderer credited with the notes it
sounds; the table also gives channels per core (FluidSynth's voices) and, for stereo, the ratio
with FluidSynth's two voices per note counted as two against bellkeys' one. The summary sets
peers.py's dry ratio on its densest workload, from this same run, beside the transposed ones.
"""
import array
import json
import os
import shutil
import subprocess
import sys
import wave

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "Tools", "python"))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (the peer benchmark whose machinery this reuses)
from processes import error_line  # noqa: E402
import sf2  # noqa: E402  (the SoundFont writer)
import smf  # noqa: E402  (the MIDI file writer)

KEYS_PER_BELL = 9
LOWEST_KEY = 6
ROOT_OFFSETS = (5, 2)          # the root's place in the bell's range, bells alternating
STEREO_DELAY_FRAMES = 48       # the stereo stand-ins' right side: the bell 1 ms later
RELEASE_TIMECENTS = 1200       # 2 s, as make-soundfont.py
TARGET_VOICES = 1024           # as peers.py's densest workload
QUALITIES = ["good", "fast", "best"]   # good first: the default, and the reference when it runs
FORMS = ["mono", "stereo"]
GOAL = 10.0


def bellkeys_command(bellkeys, sfz, midi, out, quality):
    """The bellkeys contender's command line: the SFZ map at --quality."""
    return [bellkeys, "render", "--map", sfz, "--quality", quality, "--polyphony", "65536", "--quiet",
            "-o", out, midi]


def contender(quality_or_peer, form):
    """The contender's name: fluidsynth-mono, fluidsynth-stereo, bellkeys-good-mono, ..."""
    return f"{quality_or_peer}-{form}"


class Transposed:
    """The extension peers.main runs (see its docstring)."""

    def __init__(self):
        with open(peers.PLAIN_MAP) as f:
            keys = json.load(f)["keys"]
        self.bells = [os.path.normpath(os.path.join(os.path.dirname(peers.PLAIN_MAP), k["sample"])) for k in keys]
        # The regions: (bell index, lowest key, highest key, root key).
        self.regions = []
        for index in range(len(self.bells)):
            low = LOWEST_KEY + KEYS_PER_BELL * index
            self.regions.append((index, low, low + KEYS_PER_BELL - 1, low + ROOT_OFFSETS[index % 2]))
        self.played_keys = [k for _, low, high, root in self.regions for k in range(low, high + 1) if k != root]
        self.semitones = {k: k - root for _, low, high, root in self.regions for k in range(low, high + 1)}
        self.bell_of = {k: i for i, low, high, _ in self.regions for k in range(low, high + 1)}
        seconds = peers.BELL_SECONDS
        bell_seconds = [seconds[60 + i] for i in range(len(self.bells))]
        self.lengths = {k: bell_seconds[self.bell_of[k]] * 2 ** (-self.semitones[k] / 12) for k in self.played_keys}
        self.contenders = []
        self.fonts, self.maps = {}, {}
        self.peak = 0

    # --- files -----------------------------------------------------------------------------

    def write_instruments(self, work):
        """The mono and stereo bells as WAV, SF2 and SFZ in `work`."""
        mono, stereo = [], []
        for index, path in enumerate(self.bells):
            with wave.open(path) as w:
                assert w.getsampwidth() == 2 and w.getnchannels() == 1
                rate, frames = w.getframerate(), w.readframes(w.getnframes())
            name = os.path.basename(path)
            shutil.copyfile(path, os.path.join(work, name))
            right = (b"\0\0" * STEREO_DELAY_FRAMES + frames)[:len(frames)]
            stereo_name = name.replace(".wav", "-stereo.wav")
            with wave.open(os.path.join(work, stereo_name), "wb") as w:
                w.setnchannels(2)
                w.setsampwidth(2)
                w.setframerate(rate)
                interleaved = array.array("h", bytes(len(frames) * 2))
                interleaved[0::2] = array.array("h", frames)
                interleaved[1::2] = array.array("h", right)
                w.writeframes(interleaved.tobytes())
            mono.append((name, frames, right, rate))
            stereo.append(stereo_name)
        samples = {"mono": [], "stereo": []}
        zones = {"mono": [], "stereo": []}
        regions = {"mono": [], "stereo": []}
        for (index, low, high, root), (name, frames, right, rate), stereo_name in zip(self.regions, mono, stereo):
            samples["mono"].append(sf2.Sample(f"bell{index}", frames, rate, root=root))
            zones["mono"].append(sf2.Zone(index, (low, high), root=root, release=RELEASE_TIMECENTS))
            left_id, right_id = 2 * index, 2 * index + 1
            samples["stereo"] += [sf2.Sample(f"bell{index}L", frames, rate, root=root, kind="left", link=right_id),
                                  sf2.Sample(f"bell{index}R", right, rate, root=root, kind="right", link=left_id)]
            zones["stereo"] += [sf2.Zone(left_id, (low, high), root=root, release=RELEASE_TIMECENTS, pan=-500),
                                sf2.Zone(right_id, (low, high), root=root, release=RELEASE_TIMECENTS, pan=500)]
            for form, sample in (("mono", name), ("stereo", stereo_name)):
                regions[form].append(f"<region> sample={sample} lokey={low} hikey={high} pitch_keycenter={root} "
                                     f"loop_mode=no_loop ampeg_release=2\n")
        for form in FORMS:
            self.fonts[form] = os.path.join(work, f"transposed-{form}.sf2")
            sf2.write(self.fonts[form], samples[form], zones[form], preset=f"transposed {form}")
            self.maps[form] = os.path.join(work, f"transposed-{form}.sfz")
            with open(self.maps[form], "w") as f:
                f.write(f"// The 13 bundled bells ({form}), every played key transposed; Benchmarks/transposed-peers.py\n")
                f.writelines(regions[form])

    # --- the bellkeys contender ------------------------------------------------------------

    def bellkeys_contenders(self, work, bellkeys):
        """The bellkeys contenders that render one transposed note, in order; a line for each
        form and level that does not, saying why."""
        probe = os.path.join(work, "transposed-probe.mid")
        key = self.played_keys[0]
        smf.write(probe, [(0, smf.message(0x90, key, 100)), (48000, smf.message(0x80, key, 0))], division=24000)
        available = []
        for form in FORMS:
            for quality in QUALITIES:
                out = os.path.join(work, "transposed-probe.wav")
                if os.path.exists(out):
                    os.remove(out)
                command = bellkeys_command(bellkeys, self.maps[form], probe, out, quality)
                result = subprocess.run(command, capture_output=True, text=True)
                if result.returncode == 0 and os.path.exists(out):
                    available.append(contender("bellkeys-" + quality, form))
                else:
                    print(f"transposed: bellkeys left out ({form}, --quality {quality}): `{' '.join(command)}` "
                          f"exited {result.returncode}: {error_line(result)}", flush=True)
        return available

    # --- peers.main's extension interface ----------------------------------------------------

    def prepare(self, work, bellkeys, quick):
        self.write_instruments(work)
        self.bellkeys = bellkeys
        # bellkeys first (its good level leads: the reference when it runs), then FluidSynth.
        self.contenders = self.bellkeys_contenders(work, bellkeys) + [contender("fluidsynth", f) for f in FORMS]
        return self.contenders

    def commands(self, midi, out, voices):
        commands = {}
        for name in self.contenders:
            form = "stereo" if name.endswith("-stereo") else "mono"
            if name.startswith("bellkeys-"):
                quality = name.split("-")[1]
                commands[name] = bellkeys_command(self.bellkeys, self.maps[form], midi, out, quality)
            else:
                # As peers.py, polyphony twice the average, but at least the most notes that
                # sound at once, per FluidSynth voice (two per stereo note), so none is stolen.
                limit = max(256, max(2 * voices, self.peak + 16) * self.channels(name))
                commands[name] = peers.fluidsynth_command(self.fonts[form], midi, out, limit)
        return commands

    def workloads(self, quick):
        keys = self.played_keys
        mean = sum(self.lengths[k] for k in keys) / len(keys)
        # Strikes over as long as dense-1024's (30 s less its longest bell), the file as much
        # longer as the longest transposed bell.
        seconds = 30.0 - max(peers.BELL_SECONDS.values()) + max(self.lengths.values())
        step = mean / TARGET_VOICES
        count = int((seconds - max(self.lengths.values())) / step)
        notes = [(i * step, keys[(i * 5) % len(keys)], 64 + (i * 7) % 64, peers.CHANNELS[(i // len(keys)) % len(peers.CHANNELS)])
                 for i in range(count)]
        assert all(self.semitones[n] != 0 for _, n, _, _ in notes)
        # The most notes sounding at once, for FluidSynth's polyphony (commands()).
        events = sorted([(s, 1) for s, n, _, _ in notes] + [(s + self.lengths[n], -1) for s, n, _, _ in notes])
        self.peak = now = 0
        for _, change in events:
            now += change
            self.peak = max(self.peak, now)
        # One workload per form, the same notes: each checked against its own form's reference
        # (bellkeys at good when it runs, else FluidSynth).
        return {f"transposed-{form}": (notes, [n for n in self.contenders if n.endswith("-" + form)]) for form in FORMS}

    @staticmethod
    def channels(name):
        return 2 if name.endswith("-stereo") else 1

    def played(self, name, notes):
        """Notes sounding on average (a stereo note counts once)."""
        if name.startswith("fluidsynth"):
            return peers.peer_voices(notes, self.lengths)
        return peers.average_voices(notes, self.lengths)

    def report(self, results, top):
        def load(name):
            return "transposed-stereo" if self.channels(name) == 2 else "transposed-mono"

        def figure(x):
            return f"{x:,.0f}" if x == x else "-"

        def times(x):
            return f"{x:.1f}x" if x == x else "-"

        def per_note(name, index):
            played, whole, mixing = results[(load(name), name)]
            return played * (whole, mixing)[index]

        def ratio(a, b):
            return a / b if a == a and b == b and b > 0 else float("nan")

        print()
        print("transposed (issue 26), transposed-mono and -stereo: every note transposed (-5..+6 semitones), voices per core in real time, "
              "whole process / mixing only")
        print(f"{'contender':<22}{'notes':>7}{'channels':>10}{'per note':>18}{'per channel':>20}"
              f"{'x FluidSynth, per note':>26}{'per voice as counted':>24}")
        rows = [n for n in self.contenders if (load(n), n) in results]
        for name in rows:
            played = results[(load(name), name)][0]
            channels = self.channels(name)
            whole, mixing = per_note(name, 0), per_note(name, 1)
            line = (f"{name:<22}{played:>7.0f}{played * channels:>10.0f}{figure(whole) + ' / ' + figure(mixing):>18}"
                    f"{figure(whole * channels) + ' / ' + figure(mixing * channels):>20}")
            if name.startswith("bellkeys"):
                peer = contender("fluidsynth", "stereo" if channels == 2 else "mono")
                rw, rm = ratio(whole, per_note(peer, 0)), ratio(mixing, per_note(peer, 1))
                # FluidSynth's voices against bellkeys' (two per stereo note against one).
                vw, vm = rw / self.channels(peer), rm / self.channels(peer)
                line += f"{times(rw) + ' / ' + times(rm):>26}{times(vw) + ' / ' + times(vm):>24}"
            print(line)
        b, f = results.get((top, "bellkeys")), results.get((top, "fluidsynth"))
        if b and f:
            print(f"dry, {top} (peers.py, this run): bellkeys {figure(b[0] * b[1])} / {figure(b[0] * b[2])}, "
                  f"FluidSynth {figure(f[0] * f[1])} / {figure(f[0] * f[2])} voices per core; "
                  f"bellkeys / FluidSynth {times(ratio(b[0] * b[1], f[0] * f[1]))} / {times(ratio(b[0] * b[2], f[0] * f[2]))}")
        for form in FORMS:
            peer = contender("fluidsynth", form)
            if (load(peer), peer) in results:
                print(f"FluidSynth transposed, {form} samples: {figure(per_note(peer, 0))} / {figure(per_note(peer, 1))} "
                      f"notes per core ({figure(per_note(peer, 0) * self.channels(peer))} / "
                      f"{figure(per_note(peer, 1) * self.channels(peer))} of its voices)")
        for name in rows:
            if name.startswith("bellkeys"):
                peer = contender("fluidsynth", "stereo" if self.channels(name) == 2 else "mono")
                judged = ratio(per_note(name, 1), per_note(peer, 1))
                how = "mixing only"
                if judged != judged:
                    judged, how = ratio(per_note(name, 0), per_note(peer, 0)), "whole process, a lower bound"
                verdict = "yes" if judged >= GOAL else "no"
                print(f"at least {GOAL:.0f}x FluidSynth per note, {name}: {verdict} ({times(judged)}, {how})")
        if not any(n.startswith("bellkeys") for n in rows):
            print("bellkeys' transposed contenders did not run (see the lines before the table): FluidSynth's side only")


def main():
    peers.main(Transposed())


if __name__ == "__main__":
    main()
