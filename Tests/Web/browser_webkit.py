"""Tests/Web/browser's WebKitGTK part: its WebDriver and MiniBrowser under Xvfb, a pupil's page
joined and a bell clicked.
"""
import json
import math
import os
import shutil
import subprocess
import time

from browser_harness import MINIBROWSER_CANDIDATES, NOTES, P, Processes, R, WEBKITDRIVER, page_velocity, until
from browser_pages import Pupil, quit_browser, stamp_lags


def webkit(work, bellkeys):
    """WebKitGTK's WebDriver under Xvfb: join, click a bell. Returns (the strike for the
    recording, facts), or (None, facts) after a FAIL."""
    from selenium import webdriver
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.webkitgtk.service import Service
    browser = next((p for p in MINIBROWSER_CANDIDATES if os.path.exists(p)), None)
    if not os.path.exists(WEBKITDRIVER) or browser is None or not shutil.which("Xvfb"):
        R.check("webkit", False, f"cannot start: WebKitWebDriver {os.path.exists(WEBKITDRIVER)}, MiniBrowser {browser}, "
                                 f"Xvfb {shutil.which('Xvfb')}")
        return None, None
    read, write = os.pipe()
    xvfb = P.start("Xvfb", ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                   pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=open(work / "xvfb.log", "wb"))
    os.close(write)
    import select
    number = b""
    deadline = time.monotonic() + 10
    while not number.endswith(b"\n") and time.monotonic() < deadline:
        ready, _, _ = select.select([read], [], [], 0.5)
        if ready:
            chunk = os.read(read, 16)
            if not chunk:
                break
            number += chunk
    os.close(read)
    if not number.strip():
        R.check("webkit", False, f"Xvfb gave no display in 10 s (exit {xvfb.poll()}): {(work / 'xvfb.log').read_text()[-300:]}")
        return None, None
    display = ":" + number.decode().strip()
    driver = None
    try:
        options = webdriver.WebKitGTKOptions()
        options.binary_location = browser
        options.add_argument("--automation")
        service = Service(WEBKITDRIVER, log_output=str(work / "webkitdriver.log"), env=dict(os.environ, DISPLAY=display),
                          popen_kw={"start_new_session": True})
        try:
            driver = webdriver.WebKitGTK(options=options, service=service)
        finally:
            P.adopt("WebKitWebDriver", getattr(service, "process", None))
        driver.set_page_load_timeout(20)
        driver.set_script_timeout(10)
        version = f"{driver.capabilities.get('browserName')} {driver.capabilities.get('browserVersion')}"
        pupil = Pupil(driver, "Safari", touch=False)
        pupil.open(bellkeys.url)
        ua = pupil.js("return navigator.userAgent")
        joined = pupil.join(bellkeys.code)
        notes = pupil.notes() if joined else []
        if not joined or notes != NOTES:
            R.check("webkit", False, f"{version}: joined {bool(joined)}, bells {notes}")
            return None, None
        # A click 10 % down G4 (not its middle: the page's velocity from the height is checked too).
        el = driver.find_element(By.CSS_SELECTOR, '#bells .bell[data-note="67"]')
        r = pupil.rect('#bells .bell[data-note="67"]')
        dy = math.ceil(r["top"] + 0.1 * r["height"]) - (r["top"] + r["height"] / 2)
        ActionChains(driver).move_to_element_with_offset(el, 0, int(round(dy))).click().perform()
        lit = until(lambda: pupil.spy()["lit"] and any(e["note"] == 67 and e["on"] for e in pupil.spy()["lit"]), 2, 0.02)
        spy = pupil.spy()
        ev = spy["ev"][-1] if spy["ev"] else None
        sent = [json.loads(s["m"]) for s in spy["sent"] if '"strike"' in s["m"]]
        velocity = page_velocity(ev["y"], r["top"], r["height"]) if ev else None
        pupil.d.save_screenshot(str(work / "webkit.png"))
        lit_after = (next(e["t"] for e in spy["lit"] if e["note"] == 67 and e["on"]) - ev["t"]) if lit and ev else None
        lags = stamp_lags(pupil, spy["sent"])
        ok = bool(ev) and ev["note"] == 67 and [(m["type"], m["note"], m["velocity"]) for m in sent] == [("strike", 67, velocity)] \
            and len(lags) == 1 and 0 <= lags[0] <= 100
        R.check("webkit", ok and bool(lit),
                f"{version} ({ua}) on Xvfb {display}: joined, {len(notes)} bells; a click on G4 at y {ev['y'] if ev else None} "
                f"({(ev['y'] - r['top']) / r['height'] if ev else 0:.3f} of its height, {ev['type'] if ev else None} pointer) sent "
                f"{[(s['note'], s['velocity']) for s in sent]} (expected velocity {velocity}), stamped "
                + (f"{lags[0]:.1f} ms before it was sent (0..100)" if lags else "with no time (no clock offset, or no 'at')")
                + "; lit "
                + (f"{lit_after:.0f} ms after" if lit_after is not None else "never"))
        if not sent:
            return None, None
        return dict(label="WebKit's click on G4", strikes=[(67, velocity)], t=ev["t"], phone=False), None
    except Exception as e:              # noqa: BLE001
        R.check("webkit", False, f"{type(e).__name__}: {str(e).strip()[:400]} (driver log: {work / 'webkitdriver.log'})")
        return None, None
    finally:
        quit_browser(driver)
        Processes.stop(xvfb)
