"""Tests/Web/run's groups on pages, addresses and QR codes: HTTP answers, who may open the teacher's
page, the served QR code and the one printed on a terminal.
"""
import re
import subprocess
import time

from wsclient import http_get
from run_harness import R, raw_request


def group_http(b):
    port = b.port
    started = time.monotonic()
    status, head, body = http_get(port, "/")
    took = time.monotonic() - started
    length = re.search(r"(?im)^content-length: (\d+)\r?$", head)
    R.check("http GET /", status == 200 and "Content-Type: text/html; charset=utf-8" in head and b"Ring the bells" in body
            and length is not None and int(length.group(1)) == len(body) and "Connection: close" in head and took < 2,
            f"status {status}, {len(body)} bytes (Content-Length {length.group(1) if length else None}), "
            f"'Ring the bells' {'in' if b'Ring the bells' in body else 'NOT in'} it, closed after {took:.2f} s")
    hstatus, hhead, hbody = http_get(port, "/", raw=f"HEAD / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    hlength = re.search(r"(?im)^content-length: (\d+)\r?$", hhead)
    R.check("http HEAD /", hstatus == 200 and hbody == b"" and hlength is not None and int(hlength.group(1)) == len(body),
            f"status {hstatus}, body {len(hbody)} bytes, Content-Length {hlength.group(1) if hlength else None}")
    status, head, body = http_get(port, "/qr.svg")
    R.check("http GET /qr.svg", status == 200 and "Content-Type: image/svg+xml" in head and body.startswith(b"<svg"),
            f"status {status}, {len(body)} bytes starting {body[:20]!r}")
    status, _, _ = http_get(port, "/favicon.ico")
    R.check("http GET /favicon.ico", status == 204, f"status {status}")
    status, _, body = http_get(port, "/nowhere")
    R.check("http unknown path", status == 404, f"status {status} {body[:40]!r}")
    host = f"Host: 127.0.0.1:{port}\r\n"
    cases = [
        ("POST", f"POST / HTTP/1.1\r\n{host}\r\n".encode(), 405),
        ("body", f"GET / HTTP/1.1\r\n{host}Content-Length: 5\r\n\r\nhello".encode(), 413),
        ("chunked body", f"GET / HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode(), 413),
        ("head over 8192 bytes", (f"GET / HTTP/1.1\r\n{host}" + "".join(f"X-Pad-{k}: {'a' * 90}\r\n" for k in range(95))
                                  + "\r\n").encode(), 431),
        ("head of 100 KB", (f"GET / HTTP/1.1\r\n{host}" + "".join(f"X-Pad-{k}: {'a' * 90}\r\n" for k in range(1000))
                            + "\r\n").encode(), 431),
        ("bare LF", f"GET / HTTP/1.1\n{host}\n".encode(), 400),
        ("Host evil.example", "GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n".encode(), 421),
        ("Host evil.example:port", f"GET / HTTP/1.1\r\nHost: evil.example:{port}\r\n\r\n".encode(), 421),
        ("HTTP/2.0", f"GET / HTTP/2.0\r\n{host}\r\n".encode(), 505),
        ("no Host", "GET / HTTP/1.1\r\n\r\n".encode(), 400),
        ("Host twice", f"GET / HTTP/1.1\r\n{host}{host}\r\n".encode(), 400),
        ("target over 1024 bytes", f"GET /{'a' * 1100} HTTP/1.1\r\n{host}\r\n".encode(), 414),
        ("not a request line", b"HELLO\r\n\r\n", 400),
        ("localhost", f"GET / HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode(), 200),
        ("HTTP/1.0 without Host", b"GET / HTTP/1.0\r\n\r\n", 200),
    ]
    for name, raw, want in cases:
        started = time.monotonic()
        status, _, body = raw_request(port, raw)
        took = time.monotonic() - started
        R.check(f"http {name}", status == want and took < 2,
                f"status {status} (want {want}), {len(raw)} bytes sent, answered and closed in {took:.2f} s "
                f"{body[:60].decode(errors='replace').strip()!r}")
    R.check("http bellkeys alive", b.alive(), "still running after the refused requests")


def group_access(b):
    port = b.port
    status, _, body = http_get(port, "/teacher")
    R.check("access /teacher from 127.0.0.1", status == 200, f"status {status}, {len(body)} bytes")
    teacher_page = body
    status, _, body = http_get(port, "/teacher", source="127.0.0.2")
    R.check("access /teacher from 127.0.0.2", status == 403 and body != teacher_page, f"status {status}, {len(body)} bytes")
    status, _, body = http_get(port, f"/teacher?key={b.key}", source="127.0.0.2")
    R.check("access /teacher?key from 127.0.0.2", status == 200 and body == teacher_page, f"status {status}, {len(body)} bytes")
    wrong = ("0" if b.key[0] != "0" else "1") + b.key[1:]
    status, _, _ = http_get(port, f"/teacher?key={wrong}", source="127.0.0.2")
    R.check("access /teacher?key=wrong from 127.0.0.2", status == 403, f"status {status}")
    c = b.ws("/teacher/ws", source="127.0.0.2")
    R.check("access /teacher/ws from 127.0.0.2", c.status == 403, f"status {c.status}")
    c = b.ws("/teacher/ws", source="127.0.0.2", query=f"?key={b.key}")
    first = None
    if c.status == 101:
        first = c.recv_type("room", timeout=3)
    R.check("access /teacher/ws?key from 127.0.0.2", c.status == 101 and first is not None and first["code"] == b.code,
            f"status {c.status}, room message with code {first and first['code']}")
    c = b.ws("/ws", origin="http://evil.example")
    R.check("access WebSocket Origin evil.example", c.status == 403, f"status {c.status}")
    c = b.ws("/ws", source="127.0.0.2")
    R.check("access WebSocket from 127.0.0.2", c.status == 101, f"status {c.status}")
    b.close_clients()


def group_qr(b):
    status, head, body = http_get(b.port, "/qr.svg")
    try:
        grid, side = svg_grid(body.decode())
    except ValueError as e:
        R.check("qr /qr.svg", False, f"status {status}: {e}")
        return
    width = side - 8
    border_light = not any(grid[y][x] for y in range(side) for x in range(side)
                           if x < 4 or y < 4 or x >= side - 4 or y >= side - 4)
    text, error = zbar(grid, path=b.log_path.parent / "qr-svg.pgm")
    R.check("qr /qr.svg decodes to the join URL", text == b.join_url and border_light and (width - 17) % 4 == 0,
            f"{side}x{side} modules ({width} + quiet zone 4, light: {border_light}), zbarimg read "
            f"{text!r}{' ' + error if error else ''}, want {b.join_url!r}")


def group_qrterm(b):
    raw = b.raw().decode("utf-8", "replace")
    join = re.search(r"  classroom: join at (\S+) with room code \d{4} \(up to \d+ devices\)\r\n", raw)
    lines = []
    rest = raw[join.end():] if join else ""
    for m in re.finditer(r"    \x1b\[30;107m([ █▀▄]*)\x1b\[0m\r\n", rest):
        if m.start() != (0 if not lines else lines[-1][1]):
            break
        lines.append((m.group(1), m.end()))
    rows = [s for s, _ in lines]
    side = len(rows[0]) if rows else 0
    shape = bool(rows) and all(len(r) == side for r in rows) and len(rows) == (side + 1) // 2
    if not shape:
        R.check("qrterm lines", False, f"join line found: {join is not None}; {len(rows)} QR lines right after it, "
                f"widths {sorted(set(len(r) for r in rows))}")
        return
    grid = []
    for r in rows:
        grid.append([ch in "█▀" for ch in r])
        grid.append([ch in "█▄" for ch in r])
    grid = grid[:side]
    quiet = not any(grid[y][x] for y in range(side) for x in range(side) if x < 2 or y < 2 or x >= side - 2 or y >= side - 2)
    bottom_clear = all(ch in " ▀" for ch in rows[-1]) if side % 2 else True
    text, error = zbar(grid, path=b.log_path.parent / "qr-terminal.pgm")
    R.check("qrterm decodes to the join URL", text == b.join_url and quiet and bottom_clear,
            f"{len(rows)} lines of {side} (module {side - 4} + quiet zone 2, light: {quiet}), zbarimg read "
            f"{text!r}{' ' + error if error else ''}, want {b.join_url!r}")
    status, _, body = http_get(b.port, "/qr.svg")
    try:
        svg, svg_side = svg_grid(body.decode())
        same = svg_side - 8 == side - 4 and all(svg[y + 4][x + 4] == grid[y + 2][x + 2]
                                                for y in range(side - 4) for x in range(side - 4))
    except ValueError as e:
        same, svg_side = False, str(e)
    R.check("qrterm same modules as /qr.svg", same, f"terminal {side - 4} modules, svg {svg_side} - 8, identical: {same}")


def zbar(grid, scale=8, pad=4, path=None):
    """Decodes a module grid (rows of booleans, dark True) with zbarimg: its text, or an error."""
    import numpy as np
    g = np.array(grid, dtype=bool)
    g = np.pad(g, pad, constant_values=False)
    pixels = np.where(g, 0, 255).astype(np.uint8)
    pixels = np.kron(pixels, np.ones((scale, scale), dtype=np.uint8))
    with open(path, "wb") as f:
        f.write(f"P5\n{pixels.shape[1]} {pixels.shape[0]}\n255\n".encode())
        f.write(pixels.tobytes())
    try:
        done = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"zbarimg: {e}"
    if done.returncode != 0:
        return None, f"zbarimg exit {done.returncode} {done.stderr.decode(errors='replace').strip()[:120]}"
    return done.stdout.decode("utf-8", "replace").rstrip("\n"), None


def svg_grid(svg):
    """The module grid of bellkeys' /qr.svg: (grid, side) or raises ValueError."""
    m = re.fullmatch(r'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 (\d+) (\d+)" shape-rendering="crispEdges">'
                     r'<rect width="(\d+)" height="(\d+)" fill="#fff"/><path fill="#000" d="([^"]*)"/></svg>\n?', svg)
    if not m:
        raise ValueError("not the expected <svg><rect/><path/></svg>: " + svg[:120])
    side = int(m.group(1))
    if not (int(m.group(2)) == int(m.group(3)) == int(m.group(4)) == side):
        raise ValueError("viewBox and rect disagree")
    grid = [[False] * side for _ in range(side)]
    d = m.group(5)
    runs = re.findall(r"M(\d+) (\d+)h(\d+)v1h-(\d+)z", d)
    if "".join(f"M{x} {y}h{n}v1h-{n2}z" for x, y, n, n2 in runs) != d:
        raise ValueError("the path is not only Mx yhNv1h-Nz runs")
    for x, y, n, n2 in runs:
        x, y, n = int(x), int(y), int(n)
        if n != int(n2) or y >= side or x + n > side:
            raise ValueError(f"run M{x} {y}h{n} outside the picture or not closed")
        for k in range(x, x + n):
            if grid[y][k]:
                raise ValueError(f"module {k},{y} drawn twice")
            grid[y][k] = True
    return grid, side
