"""Processes for the JACK harnesses (Tests/JACK/load, Benchmarks/jack-peers.py): CPU time from
/proc, the hypervisor's steal, stopping a process, and a private jackd on the dummy backend; and,
for the benchmarks that leave out a contender that fails (Benchmarks/transposition.py,
Benchmarks/transposed-peers.py), the line that says why a command failed.

CPU figures are utime + stime in seconds; the callers turn them into % of one core over their
window. Python 3 standard library only.
"""
import os
import subprocess
import threading
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def error_line(result):
    """The line of a finished command's output (a subprocess.CompletedProcess with text) that says
    what went wrong: the first that speaks of an error, else the last."""
    lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if "rror" in line]
    return errors[0] if errors else (lines[-1] if lines else "no message")


def cpu_seconds(pid):
    """utime + stime of a process (all its threads) in seconds, or None if it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    except (OSError, IndexError, ValueError):
        return None


def all_processes():
    """{pid: utime + stime} of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            seconds = cpu_seconds(int(entry))
            if seconds is not None:
                found[int(entry)] = seconds
    return found


def cpu_of_others(before, after, ours):
    """{pid: CPU seconds between two all_processes() readings} of the processes alive at both
    ends, less `ours`."""
    return {p: after[p] - c for p, c in before.items() if p in after and p not in ours}


def steal_ticks():
    """(steal, total) jiffies over all CPUs, from /proc/stat."""
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    return (values[7] if len(values) > 7 else 0), sum(values)


def steal_percent(before, after):
    """What the hypervisor took between two steal_ticks() readings, in % of one core."""
    total = after[1] - before[1]
    return (after[0] - before[0]) / total * os.cpu_count() * 100 if total else 0


def comm_of(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return f"pid {pid}"


def stop(process, seconds=5.0):
    """SIGTERM, then SIGKILL after `seconds`. Returns the exit status and whether it was killed."""
    if process is None or process.poll() is not None:
        return (process.returncode if process else None), False
    process.terminate()
    try:
        return process.wait(timeout=seconds), False
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(), True


def jack_environment(name):
    # JACK_NO_START_SERVER: no client may start a server of its own (FluidSynth's would, named
    # default).
    return dict(os.environ, JACK_DEFAULT_SERVER=name, JACK_NO_AUDIO_RESERVATION="1", JACK_NO_START_SERVER="1")


class Server:
    """jackd -n NAME OPTIONS -d dummy -r RATE -p PERIOD, its output lines stamped with
    time.monotonic() as they come, written to `log_path` when it stops."""

    def __init__(self, name, options, rate, period, log_path):
        self.name, self.lines, self.log_path = name, [], log_path
        self.env = jack_environment(name)
        self.command = ["jackd", "-n", name, *options, "-d", "dummy", "-r", str(rate), "-p", str(period)]
        self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=self.env)
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()
        try:
            self.wait_started(name)
        except BaseException:           # a signal too: the caller has no server to stop yet
            self.stop()
            raise

    def wait_started(self, name):
        try:
            waited = subprocess.run(["jack_wait", "-w", "-t", "5"], env=self.env, capture_output=True, timeout=10)
            started = waited.returncode == 0 and self.process.poll() is None
        except subprocess.TimeoutExpired:
            started = False
        if not started:
            raise RuntimeError(f"jackd -n {name} did not start: " + " | ".join(t for _, t in self.lines[-3:]))

    def read(self):
        for raw in self.process.stdout:
            self.lines.append((time.monotonic(), raw.decode(errors="replace").rstrip()))

    def stop(self):
        _, killed = stop(self.process)
        self.reader.join(timeout=5)
        if killed:      # a killed jackd keeps its slot in JACK's registry (8 per user) until a
            again = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=self.env)
            time.sleep(1)           # server of the same name starts and stops properly
            stop(again)
        for entry in os.listdir("/dev/shm"):
            if entry.startswith(f"jack_{self.name}_") or (entry.startswith("jack_sem.") and f"_{self.name}_" in entry):
                try:
                    os.remove(os.path.join("/dev/shm", entry))
                except OSError:
                    pass
        with open(self.log_path, "w") as f:
            f.writelines(f"{at:.6f} {text}\n" for at, text in self.lines)
