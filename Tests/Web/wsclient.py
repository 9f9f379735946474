"""A small WebSocket client for the classroom's tests: a pupil's page as bellkeys sees it, and
a hostile one. Raw sockets (no package), so a test can also send what no browser would:
unmasked, oversized, fragmented or garbled frames. Loopback only: every test connects to
127.0.0.1, with timeouts on every read.
"""
import base64
import json
import os
import re
import socket
import struct
import time


class Closed(Exception):
    pass


class Client:
    def __init__(self, port, path="/ws", host="127.0.0.1", origin=None, timeout=5.0, source=None, query=""):
        self.sock = socket.create_connection((host, port), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        hostport = f"{host}:{port}"
        request = (f"GET {path}{query} HTTP/1.1\r\nHost: {hostport}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: {origin or 'http://' + hostport}\r\n\r\n")
        self.sock.sendall(request.encode())
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])
        self.head = head.decode("latin-1")
        self.close_code = None

    def _read_until(self, marker):
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("closed before " + repr(marker))
            self.buffer += chunk
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed("closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send_frame(self, payload, opcode=1, fin=True, mask=True, rsv=0):
        if isinstance(payload, str):
            payload = payload.encode()
        header = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
        n = len(payload)
        m = 0x80 if mask else 0
        if n < 126:
            header += bytes([m | n])
        elif n < 65536:
            header += bytes([m | 126]) + struct.pack(">H", n)
        else:
            header += bytes([m | 127]) + struct.pack(">Q", n)
        if mask:
            key = os.urandom(4)
            header += key
            payload = bytes(b ^ key[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + payload)

    def send(self, message):
        self.send_frame(json.dumps(message, separators=(",", ":")))

    def recv(self, timeout=None):
        """The next text message as a dict (pings answered); raises Closed on a close frame."""
        if timeout is not None:
            self.sock.settimeout(timeout)
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 9:
                self.send_frame(payload, opcode=10)
            elif opcode == 8:
                self.close_code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                self.close_reason = payload[2:].decode(errors="replace")
                raise Closed(f"closed {self.close_code} {self.close_reason}")
            elif opcode == 1:
                return json.loads(payload)

    def recv_type(self, kind, timeout=5.0):
        """The next message of `kind`, skipping others (lit, bells...)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {kind} message in {timeout} s")
            m = self.recv(timeout=left)
            if m.get("type") == kind:
                return m

    def join(self, code, name):
        self.send({"type": "join", "code": code, "name": name})
        return self.recv_type("welcome")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def http_get(port, path="/", host="127.0.0.1", headers=None, source=None, raw=None, timeout=5.0):
    """(status, headers text, body bytes) of one request; `raw` sends those bytes instead."""
    sock = socket.create_connection((host, port), timeout=timeout, source_address=(source, 0) if source else None)
    try:
        if raw is None:
            lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}"] + [f"{k}: {v}" for k, v in (headers or {}).items()]
            raw = ("\r\n".join(lines) + "\r\n\r\n").encode()
        sock.sendall(raw)
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            data += chunk
    finally:
        sock.close()
    if not data:
        return None, "", b""
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head.decode("latin-1"), body


def classroom_address(log_text):
    """(port, room code, teacher key) from bellkeys' start-up report."""
    m = re.search(r"classroom: join at http://[0-9.]+:(\d+)/ with room code (\d{4})", log_text)
    k = re.search(r"/teacher\?key=([0-9a-f]+)", log_text)
    return (int(m.group(1)), m.group(2), k.group(1) if k else None) if m else (None, None, None)
