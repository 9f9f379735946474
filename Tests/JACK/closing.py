"""bellkeys' closing line on JACK, read by one pattern for every test: its JACK part (written by
JACKReport.closingText) and the whole line LiveSession writes around it."""
import re

JACK_PART = (r"JACK xruns: (?P<xruns>\d+), cycles (?P<cycles>\d+), "
             r"(?P<skips>skipped (?P<skipped>\d+) \((?P<skipped_frames>\d+) frames\)"
             r"(?:, repeated (?P<repeated>\d+) \((?P<repeated_frames>\d+) frames\))?)")
WHOLE = re.compile(r"bellkeys: stopped \((?P<reason>[^)]*)\); " + JACK_PART + r", .*?"
                   r"DSP mean (?P<dsp_mean>[\d.]+)% longest (?P<dsp_longest>[\d.]+)% of a cycle; "
                   r"JACK MIDI messages (?P<midi>\d+) \(not played (?P<not_played>\d+)\)"
                   r".*?dropped \(queue full\) (?P<dropped>\d+)(?:, late \d+)?; voices: peak (?P<peak>\d+), stolen (?P<stolen>\d+)")


def _numbers(match):
    return {k: (v if k in ("reason", "skips") else float(v) if k.startswith("dsp_") else int(v or 0))
            for k, v in match.groupdict().items()}


def closing_line(log):
    """The last whole closing line in `log`: (its text, its fields as numbers), or (None, None)."""
    found = list(WHOLE.finditer(log or ""))
    return (found[-1].group(0), _numbers(found[-1])) if found else (None, None)


def skipped_frames(log):
    """The frames of the server's clock bellkeys was not run in, less those it was run in twice
    (the frames skipped, less those repeated, from its closing line), and that line's words
    on it ("skipped 3 (1536 frames), repeated 1 (512 frames)", or "no closing line")."""
    found = list(re.finditer(JACK_PART, log or ""))
    if not found:
        return 0, "no closing line"
    fields = _numbers(found[-1])
    return fields["skipped_frames"] - fields["repeated_frames"], fields["skips"]
