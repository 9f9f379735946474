"""JACK servers of the tests' own, and bellkeys started and stopped outside a take; jack_lsp."""
import os
import signal
import subprocess
import time

from common import BELLKEYS, PERIOD, RATE, WORK, WRAP, tail


def start_server(name, folder, log_name="jackd.log", rate=RATE):
    """A second server of our own, for the tests that kill one or run at another rate. Returns
    its process."""
    env = dict(os.environ, JACK_DEFAULT_SERVER=name)
    options = os.environ.get("JACKD_OPTIONS", "-S").split()
    log = os.path.join(folder, log_name)
    with open(log, "w") as out:
        server = subprocess.Popen(["jackd", "-n", name, *options, "-d", "dummy", "-r", str(rate), "-p", str(PERIOD)],
                                  stdout=out, stderr=subprocess.STDOUT, env=env)
    with open(os.path.join(WORK, "extra-jackd.pid"), "w") as f:
        f.write(str(server.pid))
    try:
        waited = subprocess.run(["jack_wait", "-w", "-t", "5"], env=env, capture_output=True, timeout=10)
        if waited.returncode != 0 or server.poll() is not None:
            raise RuntimeError(f"jackd -n {name} did not start")
    except BaseException as error:
        stop_server(server)
        raise RuntimeError(f"{error}: {tail(open(log).read())}") if isinstance(error, RuntimeError) else error
    return server


def stop_server(server):
    """SIGTERM: a server stopped so frees its slot in JACK's registry of servers (8 per user)."""
    server.terminate()
    try:
        server.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def forget_server(name, folder):
    """Frees the registry slot a killed server keeps (only a server of the same name reclaims
    it): starts it again and stops it properly; removes its clients' semaphores."""
    try:
        stop_server(start_server(name, folder, "jackd-again.log"))
    finally:
        for entry in os.listdir("/dev/shm"):
            if entry.startswith("jack_sem.") and f"_{name}_" in entry:
                os.remove(os.path.join("/dev/shm", entry))


def jack_lsp(*arguments, env=None):
    return subprocess.run([*WRAP, "jack_lsp", *arguments], capture_output=True, text=True, timeout=10,
                          env=env or os.environ).stdout


def connections(listing):
    """{port: [ports it is connected to]} from `jack_lsp -c`."""
    table, port = {}, None
    for line in listing.splitlines():
        if line.startswith((" ", "\t")):
            table[port].append(line.strip())
        elif line.strip():
            port = line.strip()
            table[port] = []
    return table


def start_bellkeys(folder, arguments, env=None):
    """bellkeys on JACK, waited for until its MIDI port exists. Returns (process, log path)."""
    log_path = os.path.join(folder, "bellkeys.log")
    process = subprocess.Popen([*WRAP, BELLKEYS, "play", "--driver", "jack", "--no-ui", "-q", *arguments],
                               stdin=subprocess.DEVNULL, stdout=open(log_path, "w"), stderr=subprocess.STDOUT,
                               env=env or os.environ)
    for _ in range(100):
        if "bellkeys:midi_in" in jack_lsp(env=env) or process.poll() is not None:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    return process, log_path


def stop_bellkeys(process):
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return "hung"
