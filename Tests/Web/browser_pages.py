"""Tests/Web/browser's browsers and the pages in them: Chromium as a phone or a desktop, the script
each pupil's page gets (what it touched, sent and lit), a pupil's page and the teacher's.
"""
import json
import math
import time

from browser_harness import CHROMEDRIVER, CHROMIUM, MOBILE_UA, P, page_velocity, until


# MARK: Browsers

# Installed in each pupil's page before it joins: what the pointer did, what the page sent, and
# when each bell was lit and put out (a MutationObserver on the bells' classes).
SPY = r"""
if (!window.__bk) {
  const bk = window.__bk = {ev: [], sent: [], lit: [], state: {}};
  document.addEventListener("pointerdown", (e) => {
    const bell = e.target && e.target.closest ? e.target.closest(".bell") : null;
    bk.ev.push({type: e.pointerType, id: e.pointerId, x: e.clientX, y: e.clientY, t: e.timeStamp, now: performance.now(),
                note: bell ? Number(bell.dataset.note) : null});
  }, true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (x) { bk.sent.push({t: performance.now(), m: String(x)}); return send.call(this, x); };
  new MutationObserver((records) => {
    const t = performance.now();
    for (const r of records) {
      const el = r.target;
      if (!el.classList || !el.classList.contains("bell")) continue;
      const n = Number(el.dataset.note), on = el.classList.contains("lit");
      if (bk.state[n] !== on) { bk.state[n] = on; bk.lit.push({t, note: n, on}); }
    }
  }).observe(document.body, {subtree: true, attributes: true, attributeFilter: ["class"]});
}
"""

BELLS_JS = ("return [...document.querySelectorAll('#bells .bell')].map(e => ({note: Number(e.dataset.note), "
            "name: e.querySelector('.name').textContent, stop: !!e.querySelector('.stop'), lit: e.classList.contains('lit'), "
            "visible: e.getBoundingClientRect().width > 0}))")
# What a pupil must be able to read on each bell, measured: the whole bell on the screen (no
# scrolling), its note name wholly on the bell, the stop strip's label within the strip, and the
# hint clear of the strip. Returns the problems found.
LAYOUT_JS = r"""
const problems = [], vw = innerWidth, vh = innerHeight, slack = 0.5;
for (const b of document.querySelectorAll("#bells .bell")) {
  const r = b.getBoundingClientRect(), name = b.querySelector(".name"), n = name.getBoundingClientRect();
  const label = name.textContent, hint = b.querySelector(".hint"), stop = b.querySelector(".stop");
  if (r.left < -slack || r.top < -slack || r.right > vw + slack || r.bottom > vh + slack)
    problems.push(`${label}: the bell (${Math.round(r.left)},${Math.round(r.top)})-(${Math.round(r.right)},${Math.round(r.bottom)}) is not wholly on the ${vw}x${vh} screen`);
  if (n.left < r.left - slack || n.right > r.right + slack || n.top < r.top - slack || n.bottom > r.bottom + slack)
    problems.push(`${label}: its name (${Math.round(n.width)}x${Math.round(n.height)} px) runs ${Math.round(Math.max(r.left - n.left, n.right - r.right, r.top - n.top, n.bottom - r.bottom))} px off the ${Math.round(r.width)}x${Math.round(r.height)} px bell`);
  if (stop && (stop.scrollHeight > stop.clientHeight + 1 || stop.scrollWidth > stop.clientWidth + 1))
    problems.push(`${label}: the stop strip's label needs ${stop.scrollWidth}x${stop.scrollHeight} px, the strip is ${stop.clientWidth}x${stop.clientHeight}`);
  if (hint && getComputedStyle(hint).display !== "none") {
    const h = hint.getBoundingClientRect(), limit = stop ? stop.getBoundingClientRect().top : r.bottom;
    if (h.bottom > limit + slack || h.left < r.left - slack || h.right > r.right + slack)
      problems.push(`${label}: the hint (${Math.round(h.width)}x${Math.round(h.height)} px) runs ${Math.round(Math.max(h.bottom - limit, r.left - h.left, h.right - r.right))} px into ${stop ? "the stop strip" : "the bell's edge"}`);
  }
}
return problems;
"""
RECT_JS = ("const r = document.querySelector(arguments[0]).getBoundingClientRect(); "
           "return {left: r.left, top: r.top, width: r.width, height: r.height, right: r.right, bottom: r.bottom}")


def chromium(folder, label, mobile, width=1280, height=1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = folder / "profiles" / label
    profile.mkdir(parents=True, exist_ok=True)
    for a in ["--headless=new", "--no-sandbox", f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
              "--disable-extensions", "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--disable-features=Translate,MediaRouter,OptimizationHints",
              "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--password-store=basic",
              f"--window-size={width},{height}"]:
        options.add_argument(a)
    if mobile:
        options.add_experimental_option("mobileEmulation", {
            "deviceMetrics": {"width": 390, "height": 844, "pixelRatio": 3.0, "touch": True, "mobile": True},
            "userAgent": MOBILE_UA})
    service = Service(CHROMEDRIVER, log_output=str(folder / f"{label}-chromedriver.log"), popen_kw={"start_new_session": True})
    try:
        driver = webdriver.Chrome(options=options, service=service)
    finally:
        P.adopt(f"chromedriver {label}", getattr(service, "process", None))
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(15)
    return driver


def quit_browser(driver):
    if driver is None:
        return
    try:
        driver.quit()
    except Exception:                   # noqa: BLE001 (the process group is stopped anyway)
        pass


class Pupil:
    """A pupil's page in a browser (Chromium with touch, or WebKit with a mouse)."""

    def __init__(self, driver, name, touch=True):
        self.d = driver
        self.name = name
        self.touch = touch

    def open(self, url):
        self.d.get(url)
        self.d.execute_script(SPY)

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def rect(self, selector):
        return self.js(RECT_JS, selector)

    def touch_at(self, points):
        """Fingers down at [(x, y)] (CSS px) at once, then up: (monotonic time before, after)."""
        before = time.monotonic()
        self.d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [
            {"x": x, "y": y, "id": k + 1, "radiusX": 1, "radiusY": 1, "force": 1} for k, (x, y) in enumerate(points)]})
        after = time.monotonic()
        self.d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        return before, after

    def join(self, code):
        from selenium.webdriver.common.by import By
        self.d.find_element(By.ID, "code").send_keys(code)
        self.d.find_element(By.ID, "name").send_keys(self.name)
        if self.touch:
            r = self.rect("#go")
            self.touch_at([(round(r["left"] + r["width"] / 2), round(r["top"] + r["height"] / 2))])
        else:
            self.d.find_element(By.ID, "go").click()
        return until(lambda: self.js("return document.getElementById('room').style.display === 'flex' && "
                                     "document.querySelectorAll('#bells .bell').length > 0"), 8)

    def bells(self):
        return self.js(BELLS_JS)

    def notes(self):
        return sorted(b["note"] for b in self.bells())

    def spy(self):
        return self.js("return window.__bk ? {ev: __bk.ev, sent: __bk.sent, lit: __bk.lit} : null")

    def swipe_bell(self, note, fractions, step=0.02):
        """One finger down bell `note` through `fractions` of its height (20 ms a step), then up."""
        r = self.rect(f'#bells .bell[data-note="{note}"]')
        x = round(r["left"] + r["width"] / 2)
        ys = [math.ceil(r["top"] + f * r["height"]) for f in fractions]
        before = time.monotonic()
        self.d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": ys[0], "id": 1}]})
        for y in ys[1:]:
            time.sleep(step)
            self.d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y, "id": 1}]})
        self.d.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        return dict(note=note, x=x, ys=ys, velocity=page_velocity(ys[0], r["top"], r["height"]), at=before, rect=r)

    def tap_bell(self, note, fraction):
        """Touches bell `note` at `fraction` of its height from its top (a whole CSS pixel, in its
        middle column): (x, y, the velocity the page makes of it, monotonic time, bell rect)."""
        r = self.rect(f'#bells .bell[data-note="{note}"]')
        y = math.ceil(r["top"] + fraction * r["height"])
        x = round(r["left"] + r["width"] / 2)
        before, after = self.touch_at([(x, y)])
        return dict(note=note, x=x, y=y, velocity=page_velocity(y, r["top"], r["height"]), at=before, sent_in=after - before,
                    rect=r, fraction=(y - r["top"]) / r["height"])


# MARK: Teacher

class Teacher:
    def __init__(self, driver):
        self.d = driver

    def rows(self):
        return self.d.execute_script(
            "return [...document.querySelectorAll('#devices tr')].map(tr => ({name: tr.children[0].textContent, "
            "on: [...tr.querySelectorAll('.chip.on')].map(c => Number(c.dataset.note)), "
            "cells: [...tr.children].map(td => td.textContent)}))")

    def row(self, name):
        return next((r for r in self.rows() if r["name"] == name), None)

    def click(self, selector, retries=10):
        """A real click on what `selector` finds, again if the table is redrawn under it."""
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.common.by import By
        for _ in range(retries):
            try:
                self.d.find_element(By.CSS_SELECTOR, selector).click()
                return True
            except StaleElementReferenceException:
                time.sleep(0.05)
        return False

    def chip(self, name, note):
        """Clicks bell `note` in device `name`'s row."""
        rows = self.rows()
        index = next((k for k, r in enumerate(rows) if r["name"] == name), None)
        if index is None:
            return False
        return self.click(f"#devices tr:nth-child({index + 1}) .chip[data-note=\"{note}\"]")


def stamp_lags(pupil, sent):
    """For each strike the page sent: how long before its sending the tap was, by the time the page
    stamped on it ("at", on bellkeys' clock) and the page's clock offset (ms)."""
    offset = pupil.js("return window.bellkeysClock ? window.bellkeysClock.offset : null")
    if offset is None:
        return []
    return [s["t"] + offset - json.loads(s["m"])["at"] for s in sent if '"strike"' in s["m"] and '"at"' in s["m"]]
