#!/usr/bin/env python3
"""A slow-request flood for the classroom's tests, in a process of its own (so its loop does not
hold the test's threads back): PER connections from each of ADDRESSES source addresses
(127.0.0.2 onwards: all loopback on Linux, each a different peer to bellkeys), each sending a
request head one header line a second and never finishing it, and opened again as soon as the
server closes it.

    Tests/Web/flood.py PORT SECONDS [ADDRESSES [PER [FIRST]]]      (defaults 30, 8, 2)

Every connection goes to 127.0.0.1 from its own source address, so bellkeys sees 30 peers that
are not the machine's own address the connection reached (the per-address limits hold for
them). Prints `ready` once every connection has been opened once, and at the end one JSON line:
opened, closed by the server, failed to connect, header lines sent. SIGTERM ends it early (the
JSON line is still printed).
"""
import errno
import json
import selectors
import signal
import socket
import sys
import time


def main(argv):
    port, seconds = int(argv[1]), float(argv[2])
    addresses = int(argv[3]) if len(argv) > 3 else 30
    per = int(argv[4]) if len(argv) > 4 else 8
    first = int(argv[5]) if len(argv) > 5 else 2
    sources = [f"127.0.0.{first + k}" for k in range(addresses)]
    selector = selectors.DefaultSelector()
    stats = dict(opened=0, closedByServer=0, failed=0, lines=0)
    slots = {}              # socket -> [source, connected, next line at, lines sent]

    def open_one(source):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.bind((source, 0))
            code = s.connect_ex(("127.0.0.1", port))
        except OSError:
            s.close()
            stats["failed"] += 1
            return False
        if code not in (0, errno.EINPROGRESS):
            s.close()
            stats["failed"] += 1
            return False
        stats["opened"] += 1
        slots[s] = [source, False, 0.0, 0]
        selector.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
        return True

    def close(s, by_server):
        source = slots.pop(s)[0]
        selector.unregister(s)
        s.close()
        if by_server:
            stats["closedByServer"] += 1
        return source

    def send_line(s, slot, now):
        line = b"GET / HTTP/1.1\r\n" if slot[3] == 0 else f"X-Flood-{slot[3]}: {'x' * 8}\r\n".encode()
        try:
            s.send(line)
        except OSError:
            return
        slot[3] += 1
        slot[2] = now + 1.0
        stats["lines"] += 1

    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    started = time.monotonic()
    for source in sources:
        for _ in range(per):
            open_one(source)
    print("ready", flush=True)
    waiting = []            # sources whose connection failed to open: tried again soon
    while time.monotonic() - started < seconds and not stopping:
        now = time.monotonic()
        for key, events in selector.select(timeout=0.05):
            s = key.fileobj
            slot = slots.get(s)
            if slot is None:
                continue
            if events & selectors.EVENT_WRITE and not slot[1]:
                if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                    waiting.append(close(s, False))
                    stats["failed"] += 1
                    continue
                slot[1] = True
                selector.modify(s, selectors.EVENT_READ)
                send_line(s, slot, now)
                continue
            if events & selectors.EVENT_READ:
                try:
                    data = s.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    waiting.append(close(s, slot[1]))
        for s, slot in list(slots.items()):
            if slot[1] and now >= slot[2]:
                send_line(s, slot, now)
        again, waiting = waiting, []
        for source in again:
            if not open_one(source):
                waiting.append(source)
    for s in list(slots):
        close(s, False)
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
