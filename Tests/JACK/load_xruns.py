"""Who was late in Tests/JACK/load's unfinished cycles, from what jackd logged in a run
(load_run.xruns_in)."""
import math

EPISODE_GAP = 0.1               # s: unfinished cycles closer than this are one stretch (one event)


def named(run, client, states=("Running", "Triggered", "Finished late")):
    """xrun lines in the window naming `client` in one of `states`."""
    return sum(run.xruns["clients"].get((client, state), 0) for state in states)


def episodes(run, gap=EPISODE_GAP):
    """The unfinished cycles in stretches: a cycle less than `gap` seconds after the one before
    belongs to its stretch. Each stretch as the set of clients named in any of its cycles."""
    found, last = [], None
    for at, cycle in zip(run.xruns["times"], run.xruns["cycles"]):
        if last is None or at - last >= gap:
            found.append(set())
        found[-1] |= cycle
        last = at
    return found


def late_one(named):
    """Who was late in an unfinished cycle (or a stretch of them) that names the (client, state)
    pairs `named`: "the sender" (all after it wait for it), "both receivers", "bellkeys alone",
    "load_twin alone", or None when it names nobody."""
    names = {name for name, _ in named}
    if "load_send" in names:
        return "the sender"
    if {"bellkeys", "load_twin"} <= names:
        return "both receivers"
    if names & {"bellkeys", "load_twin"}:
        (name,) = names & {"bellkeys", "load_twin"}
        return f"{name} alone"
    return None


def who_was_late_in_episodes(run):
    """Stretches of unfinished cycles (`episodes`) by who was late, as `who_was_late` counts cycles."""
    late = {"the sender": 0, "bellkeys alone": 0, "load_twin alone": 0, "both receivers": 0, "none named": 0}
    for stretch in episodes(run):
        late[late_one(stretch) or "none named"] += 1
    return late


def who_was_late(run):
    """Unfinished cycles by the clients jackd named: the sender (all after it wait for it), bellkeys
    alone (of the two receivers the sender feeds), load_twin alone, both; each receiver alone also
    counted when in its process callback (state Running)."""
    late = {"the sender": 0, "bellkeys alone": 0, "bellkeys alone, Running": 0, "load_twin alone": 0,
            "load_twin alone, Running": 0, "both receivers": 0, "none named (a run of unfinished cycles goes on)": 0}
    for cycle in run.xruns["cycles"]:
        who = late_one(cycle)
        late[who or "none named (a run of unfinished cycles goes on)"] += 1
        if who in ("bellkeys alone", "load_twin alone"):
            late[f"{who}, Running"] += (who.split()[0], "Running") in cycle
    return late


def at_least_as_many(x, n):
    """P(X >= x) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, k) for k in range(x, n + 1)) / 2 ** n if n else 1.0


def describe_xruns(run):
    x = run.xruns
    clients = ", ".join(f"{n} {s} {c}" for (n, s), c in sorted(x["clients"].items())) or "none"
    late = ", ".join(f"{k} {v}" for k, v in who_was_late(run).items() if v) or "none"
    return (f"driver xruns {x['driver']}, unfinished cycles {x['graph']} (by who was late: {late}; lines naming "
            f"clients: {clients}); xruns in {len(x['seconds'])} of the {run.seconds} seconds")
