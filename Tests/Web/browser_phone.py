"""Tests/Web/browser's run: the phones in Chromium (joining, taps, the stop strip, two fingers, a
swipe), the teacher's page and its QR code, dealing, the follow-along, then WebKit, and the
recording checked at the end.
"""
import base64
import json
import math
import re
import subprocess
import time

from browser_harness import (Bellkeys, DECAY, FIVE, HOLD, Jack, NAMES, NOTES, R, binary, five_level_of, page_velocity, until,
                             write_map)
from browser_pages import LAYOUT_JS, Pupil, Teacher, chromium, quit_browser, stamp_lags
from browser_recording import check_recording
from browser_webkit import webkit


# MARK: The run

SET_NAME_JS = "return document.getElementById('set').textContent"

def lit_facts(spy, note, t, window=300):
    """When bell `note` was lit after page time `t` (ms) and for how long."""
    ons = [e for e in spy["lit"] if e["note"] == note and e["on"] and t - 5 <= e["t"] <= t + window]
    if not ons:
        return None
    on = ons[0]["t"]
    off = next((e["t"] for e in spy["lit"] if e["note"] == note and not e["on"] and e["t"] > on), None)
    return dict(after=on - t, lasted=None if off is None else off - on)


def run(work):
    jack = Jack(work)
    bellkeys = phone = phone2 = teacher = None
    expected = []           # strikes, in the order played, for the recording
    spacing_taps = []       # the phone's taps of the tap test (page times), for the spacing check
    spacing_sends = []      # and when the page sent their strikes (page times), for the facts
    damp_check = None
    drivers = []
    try:
        t = time.monotonic()
        jack_command = jack.start()
        map_path = write_map(work)
        bellkeys = Bellkeys(work, map_path, jack)
        bellkeys.start()
        print(f"# {jack_command}; {binary()} on {bellkeys.url} (room {bellkeys.code}), both up in "
              f"{time.monotonic() - t:.1f} s", flush=True)

        # 1. The phone joins.
        t = time.monotonic()
        phone_driver = chromium(work, "phone", mobile=True)
        drivers.append(phone_driver)
        phone = Pupil(phone_driver, "Ada")
        phone.open(bellkeys.url)
        metrics = phone.js("return [innerWidth, innerHeight, devicePixelRatio, navigator.maxTouchPoints, 'ontouchstart' in window]")
        joined = phone.join(bellkeys.code)
        bells = phone.bells() if joined else []
        names = [b["name"] for b in sorted(bells, key=lambda b: b["note"])]
        header = phone.js("return document.getElementById('who').textContent + ' / ' + document.getElementById('status').textContent")
        R.check("phone", bool(joined) and [b["note"] for b in sorted(bells, key=lambda b: b["note"])] == NOTES and names == NAMES
                and all(b["visible"] for b in bells) and metrics[:4] == [390, 844, 3, 1],
                f"a {metrics[0]}x{metrics[1]} CSS px phone (pixel ratio {metrics[2]}, {metrics[3]} touch points) typed room code "
                f"{bellkeys.code} and its name, joined by touch in {time.monotonic() - t:.1f} s (with the browser's start): "
                f"'{header}', {len(bells)} bells {' '.join(names)} (free play; expected the 13 {NAMES[0]}..{NAMES[-1]})")
        phone.d.save_screenshot(str(work / "phone.png"))
        problems = phone.js(LAYOUT_JS) if joined else ["not joined"]
        R.check("phone layout", not problems,
                f"on the {metrics[0]}x{metrics[1]} phone every bell, its name, hint and stop strip fit"
                if not problems else f"{len(problems)} problems on the {metrics[0]}x{metrics[1]} phone (screenshot phone.png): "
                + "; ".join(problems[:8]) + (" …" if len(problems) > 8 else ""))
        # Let the page's clock settle (8 pings, 250 ms apart) before timing anything.
        until(lambda: phone.js("return window.bellkeysClock ? window.bellkeysClock.delay : null") is not None, 3)

        # 2. Taps at known heights, known spacing.
        plan = [(64, 0.0), (67, 0.25), (60, 0.5), (70, 0.7), (72, 0.4)]     # E4 at its very top: 127
        spacing = 0.4
        before = phone.spy()
        n_ev0, n_sent0 = len(before["ev"]), len(before["sent"])
        taps = []
        t0 = time.monotonic() + 0.1
        for k, (note, fraction) in enumerate(plan):
            time.sleep(max(0.0, t0 + k * spacing - time.monotonic()))
            taps.append(phone.tap_bell(note, fraction))
        # The stop strip: strike D4 at its top, then touch its strip (bottom 22 %) 120 ms later.
        time.sleep(max(0.0, t0 + len(plan) * spacing - time.monotonic()))
        d_strike = phone.tap_bell(62, 0.0)
        time.sleep(max(0.0, d_strike["at"] + 0.12 - time.monotonic()))
        d_damp = phone.tap_bell(62, 0.9)
        time.sleep(0.6)
        spy = phone.spy()
        events = spy["ev"][n_ev0:]
        strikes_sent = [json.loads(s["m"]) for s in spy["sent"][n_sent0:] if '"strike"' in s["m"] or '"damp"' in s["m"]]
        if len(events) >= len(taps) + 2:
            for tap, ev in zip(taps + [d_strike, d_damp], events):
                tap["page_t"], tap["page_y"], tap["pointer"] = ev["t"], ev["y"], ev["type"]
        sent_strikes = [s for s in strikes_sent if s["type"] == "strike"]
        send_times = [m["t"] for m in spy["sent"][n_sent0:] if '"strike"' in m["m"]]
        sent_velocities = [(s["note"], s["velocity"]) for s in sent_strikes]
        planned = [(tap["note"], tap["velocity"]) for tap in taps + [d_strike]]
        lags = stamp_lags(phone, spy["sent"][n_sent0:])
        R.check("tap", len(events) == len(taps) + 2 and all(e["type"] == "touch" for e in events)
                and sent_velocities == planned and [s["type"] for s in strikes_sent] == ["strike"] * (len(taps) + 1) + ["damp"]
                and len(lags) == len(planned) and all(0 <= lag <= 100 for lag in lags),
                f"{len(events)} touches (pointer types {sorted(set(e['type'] for e in events))}) on "
                + ", ".join(f"{NAMES[tap['note'] - 60]} at {tap['fraction']:.3f} of its height (velocity {tap['velocity']})" for tap in taps)
                + f", D4 at its top then its stop strip; the page sent {[(s['type'], s['note'], s.get('velocity')) for s in strikes_sent]}"
                f" (expected the strikes {planned} and a damp of D4); each strike stamped with its tap's time on bellkeys' "
                f"clock, {', '.join(f'{lag:.1f}' for lag in lags)} ms before it was sent (0..100)")
        for tap in taps:
            expected.append(dict(label=f"tap {NAMES[tap['note'] - 60]}", strikes=[(tap["note"], tap["velocity"])],
                                 t=tap.get("page_t"), phone=True))
        spacing_taps = [tap.get("page_t") for tap in taps]
        spacing_sends = send_times[:len(taps)] if len(send_times) >= len(taps) else []
        expected.append(dict(label="D4 before its stop strip", strikes=[(62, d_strike["velocity"])], t=d_strike.get("page_t"),
                             phone=True))
        damp_check = dict(strike=d_strike, damp=d_damp)
        lit = [(tap, lit_facts(spy, tap["note"], tap["page_t"]) if "page_t" in tap else None) for tap in taps]
        # Lit while it sounds: on within 150 ms of the tap, off after about the bell's length (0.3 s).
        length_ms = (HOLD + DECAY) * 1000
        R.check("lit", all(f is not None and f["after"] <= 150 and f["lasted"] is not None
                           and length_ms - 100 <= f["lasted"] <= length_ms + 150 for _, f in lit),
                "each tapped bell lit on the page: " + ", ".join(
                    f"{NAMES[tap['note'] - 60]} " + (f"{f['after']:.0f} ms after the tap, for {f['lasted']:.0f} ms" if f and f["lasted"] else
                                                     ("lit, never put out" if f else "never lit")) for tap, f in lit)
                + f" (bells sound {length_ms:.0f} ms; lit within 150 ms, for {length_ms - 100:.0f}..{length_ms + 150:.0f} ms)")

        # 3. Two fingers at once.
        time.sleep(0.2)
        r1, r2 = phone.rect('#bells .bell[data-note="65"]'), phone.rect('#bells .bell[data-note="71"]')
        p1 = (round(r1["left"] + r1["width"] / 2), math.ceil(r1["top"] + 0.1 * r1["height"]))
        p2 = (round(r2["left"] + r2["width"] / 2), math.ceil(r2["top"] + 0.6 * r2["height"]))
        v1, v2 = page_velocity(p1[1], r1["top"], r1["height"]), page_velocity(p2[1], r2["top"], r2["height"])
        spy = phone.spy()
        n_ev, n_sent = len(spy["ev"]), len(spy["sent"])
        phone.touch_at([p1, p2])
        time.sleep(0.15)
        spy = phone.spy()
        two = spy["ev"][n_ev:]
        sent_two = [json.loads(s["m"]) for s in spy["sent"][n_sent:] if '"strike"' in s["m"]]
        lit_two = {n: lit_facts(spy, n, two[0]["t"]) if two else None for n in (65, 71)}
        R.check("multi-touch", len(two) == 2 and len({e["id"] for e in two}) == 2 and sorted((s["note"], s["velocity"]) for s in sent_two)
                == sorted([(65, v1), (71, v2)]) and all(lit_two.values()),
                f"two fingers down together on F4 (velocity {v1}) and B4 (velocity {v2}): {len(two)} pointerdowns, pointer ids "
                f"{[e['id'] for e in two]}, the page sent {[(s['note'], s['velocity']) for s in sent_two]}; lit: "
                + ", ".join(f"{NAMES[n - 60]} {'%.0f ms after' % f['after'] if f else 'no'}" for n, f in lit_two.items()))
        expected.append(dict(label="two fingers", strikes=[(65, v1), (71, v2)], t=two[0]["t"] if two else None, phone=True))

        # A swipe down a damping bell: the finger lands (a strike) and, past 35 % of the bell's
        # height, damps it.
        time.sleep(0.4)
        n_sent = len(phone.spy()["sent"])
        swipe = phone.swipe_bell(61, [0.1, 0.3, 0.5, 0.7])
        time.sleep(0.4)
        spy = phone.spy()
        swipe_sent = [(s["t"], json.loads(s["m"])) for s in spy["sent"][n_sent:] if '"strike"' in s["m"] or '"damp"' in s["m"]]
        kinds = [(m["type"], m["note"], m.get("velocity")) for _, m in swipe_sent]
        swipe["damp_after"] = swipe_sent[1][0] - swipe_sent[0][0] if len(swipe_sent) == 2 else None
        R.check("swipe", kinds == [("strike", 61, swipe["velocity"]), ("damp", 61, None)],
                f"a finger swiped down C#4 from {swipe['ys'][0]} to {swipe['ys'][-1]} px (its bell {swipe['rect']['top']:.0f}.."
                f"{swipe['rect']['bottom']:.0f}): the page sent {kinds}"
                + (f", the damp {swipe['damp_after']:.0f} ms after the strike" if swipe["damp_after"] is not None else "")
                + f" (expected a strike at velocity {swipe['velocity']} as the finger landed, then a damp)")
        if kinds and kinds[0][0] == "strike":
            expected.append(dict(label="the swipe's strike", strikes=[(61, kinds[0][2])], t=swipe_sent[0][0], phone=True))

        # 7 (first: the teacher's page is open from here on). The teacher and the QR code.
        t = time.monotonic()
        teacher_driver = chromium(work, "teacher", mobile=False, width=1280, height=1000)
        drivers.append(teacher_driver)
        teacher = Teacher(teacher_driver)
        teacher_driver.get(bellkeys.url + "teacher")
        listed = until(lambda: teacher.row("Ada"), 5)
        code_shown = until(lambda: teacher_driver.execute_script("return document.getElementById('code').textContent") == bellkeys.code, 3)
        shown = teacher_driver.execute_script("return document.getElementById('code').textContent")
        R.check("teacher", bool(listed) and bool(code_shown),
                f"/teacher from 127.0.0.1 in desktop Chromium (opened in {time.monotonic() - t:.1f} s) shows room code "
                f"{shown} and lists "
                f"{[r['name'] for r in teacher.rows()]} (Ada: {listed['cells'][2] if listed else '-'} strikes)")
        qr = teacher_driver.execute_script(
            "const i = document.getElementById('qr'); i.scrollIntoView({block: 'center'}); const r = i.getBoundingClientRect();"
            "return {x: r.left, y: r.top, width: r.width, height: r.height, complete: i.complete, natural: i.naturalWidth,"
            " vw: innerWidth, vh: innerHeight, sx: scrollX, sy: scrollY}")
        shot = work / "teacher.png"
        teacher_driver.save_screenshot(str(shot))
        # Chromium's screenshot of the page, cut to the image's rectangle (the clip is in page
        # coordinates: the rectangle in the window plus the scroll).
        clip = teacher_driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": {
            "x": qr["x"] + qr["sx"], "y": qr["y"] + qr["sy"], "width": qr["width"], "height": qr["height"], "scale": 1}})
        crop = work / "qr-crop.png"
        crop.write_bytes(base64.b64decode(clip["data"]))
        decoded = subprocess.run(["zbarimg", "--raw", "-q", str(crop)], capture_output=True, text=True, timeout=20)
        inside = qr["x"] >= 0 and qr["y"] >= 0 and qr["x"] + qr["width"] <= qr["vw"] and qr["y"] + qr["height"] <= qr["vh"]
        R.check("qr", qr["complete"] and qr["natural"] > 0 and inside and qr["width"] >= 250 and qr["height"] >= 250
                and decoded.stdout.strip() == bellkeys.url,
                f"img#qr loaded ({qr['natural']} px natural), shown at {qr['width']:.0f}x{qr['height']:.0f} CSS px on a "
                f"{qr['vw']}x{qr['vh']} page, in view: {inside}; its screenshot ({crop.name}) decodes to "
                f"{decoded.stdout.strip()!r} (zbarimg status {decoded.returncode}; expected {bellkeys.url!r}, at least 250 px)")

        # 4. Dealing, with a second phone.
        t = time.monotonic()
        phone2_driver = chromium(work, "phone2", mobile=True)
        drivers.append(phone2_driver)
        phone2 = Pupil(phone2_driver, "Ben")
        phone2.open(bellkeys.url)
        joined2 = phone2.join(bellkeys.code)
        both = until(lambda: teacher.row("Ben") and teacher.row("Ada"), 5)
        names_listed = [r["name"] for r in teacher.rows()]
        teacher.click("#dealRound")
        want_ada, want_ben = NOTES[0::2], NOTES[1::2]
        got = until(lambda: (phone.notes() == want_ada and phone2.notes() == want_ben) and (phone.notes(), phone2.notes()), 5)
        chips = until(lambda: teacher.row("Ada")["on"] == want_ada and teacher.row("Ben")["on"] == want_ben, 3)
        R.check("deal round", bool(joined2) and bool(both) and bool(got) and bool(chips),
                f"with Ben's phone joined too (the teacher lists {names_listed}), 'Deal all 13 round the room': Ada's page shows "
                f"{phone.notes()} ({len(phone.notes())} bells), Ben's {phone2.notes()} ({len(phone2.notes())}); the teacher's chips "
                f"Ada {teacher.row('Ada')['on']}, Ben {teacher.row('Ben')['on']} (expected {want_ada} and {want_ben})")
        # A chip gives a bell (C#4 to Ada), then another takes one (C5 from Ada).
        gave = teacher.chip("Ada", 61)
        want_give = sorted(want_ada + [61])
        after_give = until(lambda: phone.notes() == want_give and teacher.row("Ada")["on"] == want_give and phone.notes(), 5)
        took = teacher.chip("Ada", 72)
        want_take = [n for n in want_give if n != 72]
        after_take = until(lambda: phone.notes() == want_take and teacher.row("Ada")["on"] == want_take and phone.notes(), 5)
        ben_after = phone2.notes()
        names_shown = [b["name"] for b in sorted(phone.bells(), key=lambda b: b["note"])]
        R.check("deal chips", gave and took and bool(after_give) and bool(after_take) and ben_after == want_ben
                and names_shown == [NAMES[n - 60] for n in want_take],
                f"clicking Ada's C#4 chip gave it: her page showed {after_give or phone.notes()}; then her C5 chip took it: "
                f"{phone.notes()} ({' '.join(names_shown)}); Ben's page kept {ben_after} (expected {want_give}, {want_take}, {want_ben})")
        teacher.click("#free")
        free = until(lambda: phone.notes() == NOTES and phone2.notes() == NOTES, 5)
        mode = until(lambda: (lambda m: m if m.startswith("Free play") else None)(
            teacher_driver.execute_script("return document.getElementById('mode').textContent")), 3) \
            or teacher_driver.execute_script("return document.getElementById('mode').textContent")
        R.check("free play", bool(free) and mode.startswith("Free play"),
                f"'Free play': Ada's page shows {len(phone.notes())} bells, Ben's {len(phone2.notes())} (expected 13 each); "
                f"the teacher's page says {mode!r} ({time.monotonic() - t:.1f} s for the dealing checks)")
        quit_browser(phone2_driver)
        drivers.remove(phone2_driver)
        phone2 = None
        until(lambda: teacher.row("Ben") is None, 5)

        # 5. The follow-along: Ada holds F4 and A4 (the demo's first two notes).
        t = time.monotonic()
        teacher.chip("Ada", 65)
        until(lambda: phone.notes() == [65] and teacher.row("Ada")["on"] == [65], 5)
        teacher.chip("Ada", 69)
        two_bells = until(lambda: phone.notes() == [65, 69] and teacher.row("Ada")["on"] == [65, 69], 5)
        from selenium.webdriver.support.ui import Select
        from selenium.webdriver.common.by import By
        Select(teacher_driver.find_element(By.ID, "tune")).select_by_index(0)
        tempo = teacher_driver.find_element(By.ID, "tempo")
        tempo.clear()
        tempo.send_keys("100")
        tune_name = Select(teacher_driver.find_element(By.ID, "tune")).first_selected_option.text
        teacher.click("#followStart")
        started = time.monotonic()
        countdown = until(lambda: phone.js(
            "const c = document.querySelector('#bells .bell[data-note=\"65\"] .cue');"
            "return c && getComputedStyle(c).display !== 'none' && /^[0-9]+\\.[0-9]$/.test(c.textContent) ? c.textContent : null"), 5, 0.02)
        countdown_at = time.monotonic() - started
        follow_text = phone.js("return document.getElementById('follow').textContent")
        # Wait (in the page, frame by frame) for the bell to glow, then tap it at once.
        due = phone.d.execute_async_script(
            "const done = arguments[arguments.length - 1], until = performance.now() + 6000;"
            "const el = () => document.querySelector('#bells .bell[data-note=\"65\"]');"
            "const look = () => { const e = el(); if (e && e.classList.contains('due')) done({t: performance.now(),"
            " label: e.querySelector('.cue').textContent}); else if (performance.now() > until) done(null); else requestAnimationFrame(look); };"
            "look();")
        n_ev = len(phone.spy()["ev"])
        follow_tap = phone.tap_bell(65, 0.05) if due else None
        judged = until(lambda: phone.js(
            "const j = document.querySelector('#bells .bell[data-note=\"65\"] .judged');"
            "return j && j.style.display === 'block' ? j.textContent : null"), 3, 0.02)
        # A4, due 600 ms after F4 and not rung: missed once its window (600 ms) has closed.
        missed = until(lambda: phone.js(
            "const j = document.querySelector('#bells .bell[data-note=\"69\"] .judged');"
            "return j && j.style.display === 'block' ? j.textContent : null"), 3, 0.02)
        tally = until(lambda: (lambda r: r if r and re.match(r"^[1-9][0-9]* · 0 · 0 · [1-9]", r["cells"][4]) else None)(
            teacher.row("Ada")), 3)
        spy = phone.spy()
        tap_ev = spy["ev"][n_ev:]
        R.check("follow cue", bool(two_bells) and bool(countdown) and bool(due),
                f"Ada holds {phone.notes()}; the teacher started {tune_name!r} at tempo 100; {countdown_at:.2f} s later her F4 counted "
                f"down ({countdown!r}), then glowed (class due, its label {due['label'] if due else None!r}); the page said {follow_text!r}")
        if follow_tap and tap_ev:
            expected.append(dict(label="the follow-along's tap", strikes=[(65, follow_tap["velocity"])], t=tap_ev[0]["t"], phone=True))
        R.check("follow judged", judged == "✓ on time" and missed == "missed" and bool(tally),
                f"tapped F4 {tap_ev[0]['t'] - due['t']:.0f} ms after it glowed: the page showed {judged!r} (expected '✓ on time'); "
                f"A4, left alone, {missed!r} (expected 'missed'); "
                f"the teacher's tally (on time · early · late · missed): {(tally or teacher.row('Ada') or {'cells': ['', '', '', '', '-']})['cells'][4]!r}"
                if due and tap_ev else f"no tap (due: {due}); judged {judged!r}")
        teacher.click("#followStop")
        over = until(lambda: phone.js("return document.getElementById('follow').textContent") == "The follow-along is over.", 3)
        text = until(lambda: (lambda x: x if x.startswith("Last: ") else None)(
            teacher_driver.execute_script("return document.getElementById('followText').textContent")), 3) \
            or teacher_driver.execute_script("return document.getElementById('followText').textContent")
        said_phone = phone.js("return document.getElementById('follow').textContent")
        R.check("follow stop", bool(over) and text.startswith("Last: "),
                f"Stop: the phone says {said_phone!r}; the teacher's page "
                f"{text[:60]!r}… ({time.monotonic() - t:.1f} s for the follow-along)")
        teacher.click("#free")
        until(lambda: phone.notes() == NOTES, 5)

        # 6. WebKit.
        webkit_strike, _ = webkit(work, bellkeys)
        if webkit_strike:
            expected.append(webkit_strike)

        # 7. The teacher chooses the map's second set: the phone names it and shows its five bells,
        # the teacher's buttons count them, and a tap sounds the new set (checked in the recording).
        t = time.monotonic()
        before = dict(menu=teacher_driver.execute_script(
            "const s = document.getElementById('set'); return {shown: !document.getElementById('setLabel').hidden,"
            " options: Array.from(s.options, (o) => o.textContent), chosen: s.options[s.selectedIndex].textContent}"),
            name=phone.js(SET_NAME_JS))
        Select(teacher_driver.find_element(By.ID, "set")).select_by_visible_text("Five")
        shown = until(lambda: phone.notes() == FIVE and phone.js(SET_NAME_JS) == "🔔 Five", 5)
        deal = until(lambda: (lambda x: x if x == "Deal all 5 round the room" else None)(
            teacher_driver.execute_script("return document.getElementById('dealRound').textContent")), 3)
        # The menu let go of the focus, and shows the set bellkeys reports.
        menu_after = until(lambda: teacher_driver.execute_script(
            "const s = document.getElementById('set'); return document.activeElement !== s"
            " && s.options[s.selectedIndex].textContent === 'Five' ? 'Five' : null"), 3)
        n_ev = len(phone.spy()["ev"])
        set_tap = phone.tap_bell(60, 0.2) if shown else None
        set_ev = phone.spy()["ev"][n_ev:]
        if set_tap and set_ev:
            expected.append(dict(label="the set Five's C4", strikes=[(60, set_tap["velocity"])], t=set_ev[0]["t"], phone=True,
                                 level=five_level_of))
        said = until(lambda: re.search(r"^set: Five \(2 of 2\), the teacher's choice: .*$", bellkeys.text(), re.M), 3)
        R.check("set chosen", before["menu"] == dict(shown=True, options=["Steps", "Five"], chosen="Steps")
                and before["name"] == "🔔 Steps" and bool(shown) and bool(deal) and bool(set_tap and set_ev) and bool(said)
                and menu_after == "Five",
                f"the teacher's Set menu {before['menu']}; the phone named {before['name']!r}; choosing Five: the phone shows "
                f"{phone.notes()} under {phone.js(SET_NAME_JS)!r}, the teacher's menu {menu_after!r} (not focused), its button "
                f"{deal!r}; bellkeys said {said.group(0) if said else None!r}; tapped C4 at velocity "
                f"{set_tap['velocity'] if set_tap else None} ({time.monotonic() - t:.1f} s)")

        # The teacher's strike count for Ada (taps so far, all accepted), once the page has the last
        # (it is redrawn at most every 200 ms).
        made = sum(len(e["strikes"]) for e in expected if e.get("phone"))
        until(lambda: (teacher.row("Ada") or {"cells": ["", "", "0"]})["cells"][2] == str(made), 3)
        ada = teacher.row("Ada")
        ada_strikes = int(ada["cells"][2]) if ada else None
    finally:
        for d in drivers:
            quit_browser(d)
        status, seconds = bellkeys.stop() if bellkeys else (None, 0.0)
        jack.stop()
    said = bellkeys.text()
    R.check("bellkeys stop", status == 0 and "recorded " in said,
            f"bellkeys exited with status {status} {seconds:.2f} s after SIGTERM: "
            + " ".join(l.strip() for l in said.splitlines() if l.startswith(("recorded", "bellkeys: stopped")))[:400])
    check_recording(bellkeys, expected, spacing_taps, spacing_sends, damp_check, ada_strikes)
