// The pupil's page, served from the binary (nothing loaded from elsewhere: it works on a
// classroom network with no internet). Plain HTML, CSS and JavaScript for current phone
// browsers (Safari on iOS, Chrome on Android) and desktop ones.
//
// It joins with the room code, then shows the pupil's bells as big coloured buttons with
// their note names, lit while the bell sounds (anyone's strike). A touch strikes (several
// fingers, several bells); where the finger lands sets how hard: the top of a bell is loudest.
// A bell that damps is stopped by swiping down across it, or by its "stop" strip. The page
// keeps the clock offset to bellkeys' clock as NTP does (pings over the socket, the round
// trip with the shortest delay wins), and comes back by itself if the Wi-Fi drops.

public let pupilPageHTML = ##"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1, maximum-scale=1, user-scalable=no, viewport-fit=cover">
    <meta name="color-scheme" content="dark">
    <title>bellkeys: ring the bells</title>
    <style>
    :root { --bg: #14161c; --fg: #f4f4f6; --dim: #9aa0ad; }
    * { box-sizing: border-box; -webkit-tap-highlight-color: transparent; }
    html, body { margin: 0; height: 100%; background: var(--bg); color: var(--fg);
      font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    body { display: flex; flex-direction: column; user-select: none; -webkit-user-select: none; touch-action: manipulation; }
    header { padding: 10px 16px; display: flex; justify-content: space-between; align-items: center; font-size: 18px; }
    header .status { color: var(--dim); font-size: 15px; }
    #join { margin: auto; width: min(92vw, 420px); display: flex; flex-direction: column; gap: 14px; padding: 16px; }
    #join h1 { font-size: 30px; margin: 0 0 4px; text-align: center; }
    #join p { color: var(--dim); margin: 0; text-align: center; font-size: 17px; }
    #join label { font-size: 18px; }
    #join input { width: 100%; font-size: 28px; padding: 12px 14px; border-radius: 14px; border: 2px solid #3a3f4b;
      background: #1f232c; color: var(--fg); }
    #code { letter-spacing: 0.4em; text-align: center; }
    #join button { font-size: 26px; padding: 16px; border-radius: 16px; border: 0; background: #4f7cff; color: #fff; font-weight: 700; }
    #message { min-height: 1.4em; color: #ffb4b4; font-size: 18px; text-align: center; }
    #room { flex: 1; display: none; flex-direction: column; padding: 8px 10px 14px; gap: 10px; min-height: 0; }
    #bells { flex: 1; display: grid; gap: 12px; min-height: 0; grid-auto-rows: 1fr; }
    .bell { position: relative; border-radius: 26px; display: flex; flex-direction: column; align-items: center;
      justify-content: center; touch-action: none; color: #111; font-weight: 800; overflow: hidden;
      box-shadow: inset 0 -10px 0 rgba(0,0,0,.18); transition: transform .06s, filter .2s, box-shadow .2s; min-height: 56px;
      container-type: size; }
    /* The name sized to its bell (browsers without container units keep the vmin size). */
    .bell .name { font-size: clamp(40px, 14vmin, 120px); font-size: clamp(24px, min(36cqw, 42cqh), 120px); line-height: 1; white-space: nowrap; }
    .bell .hint { font-size: 16px; font-weight: 600; opacity: .7; margin-top: 6px; white-space: nowrap; }
    @container (max-width: 229px) { .bell .hint { display: none; } }
    @container (max-height: 219px) { .bell .hint { display: none; } }
    .bell.dim { filter: saturate(.55) brightness(.55); }
    .bell.lit { filter: none; box-shadow: 0 0 0 6px #fff, 0 0 40px 12px rgba(255,255,255,.55); }
    .bell.down { transform: scale(.97); }
    .bell .stop { position: absolute; left: 0; right: 0; bottom: 0; height: 22%; background: rgba(0,0,0,.28); color: #fff;
      font-size: 16px; font-size: clamp(11px, 11cqh, 18px); display: flex; align-items: center; justify-content: center; font-weight: 700;
      white-space: nowrap; overflow: hidden; }
    .bell .cue { position: absolute; top: 10px; right: 14px; font-size: 26px; background: #111; color: #fff; padding: 4px 12px;
      border-radius: 14px; display: none; font-variant-numeric: tabular-nums; }
    .bell.due { box-shadow: 0 0 0 8px #fff, 0 0 50px 18px #fff; filter: none; }
    .bell .judged { position: absolute; top: 10px; left: 14px; font-size: 20px; background: rgba(0,0,0,.7); color: #fff; padding: 4px 10px;
      border-radius: 12px; display: none; }
    #set { text-align: center; font-size: 17px; color: var(--dim); display: none; }
    #follow { text-align: center; font-size: 19px; min-height: 1.3em; color: #ffd86b; }
    #none { margin: auto; color: var(--dim); font-size: 22px; text-align: center; padding: 20px; display: none; }
    #note { color: var(--dim); font-size: 14px; text-align: center; }
    </style>
    </head>
    <body>
    <header><span id="who">bellkeys</span><span class="status" id="status"></span></header>
    <form id="join" autocomplete="off">
      <h1>🔔 Ring the bells</h1>
      <p>Type the room code from the teacher's screen.</p>
      <label for="code">Room code</label>
      <input id="code" name="code" inputmode="numeric" pattern="[0-9]*" maxlength="4" required>
      <label for="name">Your name</label>
      <input id="name" name="name" maxlength="24" required>
      <button id="go" type="submit">Join</button>
      <div id="message" role="alert"></div>
    </form>
    <main id="room">
      <div id="set" aria-live="polite"></div>
      <div id="follow" aria-live="polite"></div>
      <div id="bells"></div>
      <div id="none">Waiting for the teacher to give you a bell…</div>
      <div id="note"></div>
    </main>
    <script>
    "use strict";
    const $ = (id) => document.getElementById(id);
    let socket = null, joined = false, wanted = null, retry = 0, bells = [], fixedVelocity = null;
    let offset = null, bestDelay = Infinity, samples = [];
    const cues = [];
    const lit = new Set();

    function status(text) { $("status").textContent = text; }

    function connect() {
      socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws");
      socket.onopen = () => {
        retry = 0;
        // Back after a drop: the token of the welcome brings this device back with its bells.
        const join = {type: "join", code: wanted.code, name: wanted.name};
        if (wanted.resume) join.resume = wanted.resume;
        socket.send(JSON.stringify(join));
        status("joining…");
      };
      socket.onmessage = (event) => {
        let m;
        try { m = JSON.parse(event.data); } catch (e) { return; }
        if (m.type === "welcome") { welcome(m); }
        else if (m.type === "bells") { fixedVelocity = m.fixedVelocity; showSet(m.set); showBells(m.bells); }
        else if (m.type === "lit") { lit.clear(); m.notes.forEach((n) => lit.add(n)); drawLights(); }
        else if (m.type === "pong") { clockSample(m); }
        else if (m.type === "cue") { cues.push(m); }
        else if (m.type === "judged") { showJudged(m); }
        else if (m.type === "follow") { followState(m); }
        else if (m.type === "refused") { refused(m); }
        else if (m.type === "removed") { wanted = null; leave(m.text); }
      };
      socket.onclose = () => {
        socket = null;
        if (!wanted) return;
        // Back by itself when the Wi-Fi returns, slowly if it keeps failing (no reconnect storm).
        retry = Math.min(retry + 1, 6);
        status("reconnecting…");
        setTimeout(connect, 500 * retry + Math.random() * 1000);
      };
    }

    function welcome(m) {
      joined = true;
      wanted.resume = m.resume;
      sessionStorage.setItem("bellkeys", JSON.stringify(wanted));
      $("join").style.display = "none";
      $("room").style.display = "flex";
      $("who").textContent = "🔔 " + m.name;
      status("in the room");
      fixedVelocity = m.fixedVelocity;
      showSet(m.set);
      showBells(m.bells);
      startClock();
      keepAwake();
    }

    function refused(m) {
      wanted = null;
      sessionStorage.removeItem("bellkeys");
      leave(m.text);
    }

    function leave(text) {
      joined = false;
      $("room").style.display = "none";
      $("join").style.display = "flex";
      $("message").textContent = text;
      status("");
    }

    $("join").addEventListener("submit", (event) => {
      event.preventDefault();
      const code = $("code").value.trim(), name = $("name").value.trim();
      if (!/^[0-9]{4}$/.test(code)) { $("message").textContent = "The room code is 4 digits."; return; }
      if (!name) { $("message").textContent = "Type your name."; return; }
      $("message").textContent = "";
      wanted = {code, name};
      if (socket) socket.close(); else connect();
    });

    // The set of bells the teacher chose, by name (none with a map of one instrument).
    function showSet(name) {
      $("set").textContent = name ? "🔔 " + name : "";
      $("set").style.display = name ? "block" : "none";
    }

    function showBells(list) {
      bells = list;
      const box = $("bells");
      box.innerHTML = "";
      $("none").style.display = list.length ? "none" : "block";
      box.style.display = list.length ? "grid" : "none";
      const wide = innerWidth > innerHeight;
      const columns = list.length <= 2 ? (wide ? list.length : 1) : (list.length <= 4 ? 2 : (wide ? 5 : 3));
      box.style.gridTemplateColumns = "repeat(" + Math.max(1, columns) + ", 1fr)";
      for (const bell of list) {
        const el = document.createElement("div");
        el.className = "bell dim";
        el.style.background = bell.colour;
        el.dataset.note = bell.note;
        el.setAttribute("role", "button");
        el.setAttribute("aria-label", "bell " + bell.name);
        const name = document.createElement("div");
        name.className = "name";
        name.textContent = bell.name;
        el.appendChild(name);
        const hint = document.createElement("div");
        hint.className = "hint";
        hint.textContent = fixedVelocity ? "tap to ring" : "tap high: loud · low: soft";
        el.appendChild(hint);
        const cue = document.createElement("div");
        cue.className = "cue";
        el.appendChild(cue);
        const judged = document.createElement("div");
        judged.className = "judged";
        el.appendChild(judged);
        if (bell.damps) {
          const stop = document.createElement("div");
          stop.className = "stop";
          stop.textContent = "✋ stop";
          el.appendChild(stop);
        }
        wire(el, bell);
        box.appendChild(el);
      }
      drawLights();
    }

    function send(message) { if (socket && socket.readyState === 1 && joined) socket.send(JSON.stringify(message)); }

    // One pointer per finger: each touch on a bell strikes it; swiping down a damping bell (or
    // touching its stop strip) damps it.
    function wire(el, bell) {
      const starts = new Map();
      el.addEventListener("pointerdown", (event) => {
        event.preventDefault();
        el.setPointerCapture(event.pointerId);
        const box = el.getBoundingClientRect();
        const y = (event.clientY - box.top) / box.height;
        if (bell.damps && y > 0.78) { send({type: "damp", note: bell.note}); return; }
        const velocity = fixedVelocity || Math.max(1, Math.min(127, Math.round(127 - y * 87)));
        const strike = {type: "strike", note: bell.note, velocity};
        // When the finger landed, on bellkeys' clock: the follow-along judges the tap, not the Wi-Fi.
        if (offset !== null) strike.at = Math.max(0, event.timeStamp + offset);
        send(strike);
        starts.set(event.pointerId, {y: event.clientY, damped: false});
        el.classList.add("down");
        if (navigator.vibrate) navigator.vibrate(8);
      });
      el.addEventListener("pointermove", (event) => {
        const start = starts.get(event.pointerId);
        if (!start || start.damped || !bell.damps) return;
        if (event.clientY - start.y > el.getBoundingClientRect().height * 0.35) {
          start.damped = true;
          send({type: "damp", note: bell.note});
        }
      });
      const up = (event) => { starts.delete(event.pointerId); if (!starts.size) el.classList.remove("down"); };
      el.addEventListener("pointerup", up);
      el.addEventListener("pointercancel", up);
      el.addEventListener("contextmenu", (event) => event.preventDefault());
    }

    function drawLights() {
      for (const el of document.querySelectorAll(".bell")) {
        const on = lit.has(Number(el.dataset.note));
        el.classList.toggle("lit", on);
        el.classList.toggle("dim", !on);
      }
    }

    // The follow-along: cues carry when each bell is due on bellkeys' clock; this page's clock is
    // bellkeys' less the offset. The last 3 s before a bell is due, it counts down on the bell;
    // within 150 ms of the moment the bell glows: ring it now.
    function followState(m) {
      cues.length = 0;
      $("follow").textContent = m.state === "started" ? "Follow along: " + m.name + ". Ring your bell when it glows." : "The follow-along is over.";
    }
    function showJudged(m) {
      const el = document.querySelector('.bell[data-note="' + m.note + '"] .judged');
      if (!el) return;
      el.textContent = {onTime: "✓ on time", early: "early", late: "late", missed: "missed"}[m.result] || m.result;
      el.style.display = "block";
      clearTimeout(el.hide);
      el.hide = setTimeout(() => { el.style.display = "none"; }, 1200);
    }
    function drawCues() {
      requestAnimationFrame(drawCues);
      if (offset === null) return;
      const now = performance.now() + offset;
      while (cues.length && cues[0].at < now - 1000) cues.shift();
      for (const el of document.querySelectorAll(".bell")) {
        const note = Number(el.dataset.note);
        const next = cues.find((c) => c.note === note && c.at > now - 150);
        const label = el.querySelector(".cue");
        const due = next && Math.abs(next.at - now) <= 150;
        el.classList.toggle("due", !!due);
        if (next && next.at - now <= 3000 && !due) {
          label.style.display = "block";
          label.textContent = ((next.at - now) / 1000).toFixed(1);
        } else if (due) {
          label.style.display = "block";
          label.textContent = "now!";
        } else {
          label.style.display = "none";
        }
      }
    }
    requestAnimationFrame(drawCues);

    // The clock offset to bellkeys' clock, as NTP: t1 sent, t2 received there, t3 replied
    // there, t4 received here; offset = ((t2 - t1) + (t3 - t4)) / 2, from the sample with the
    // shortest round trip of the last 8.
    let clockTimer = null;
    function startClock() {
      if (clockTimer) return;
      let n = 0;
      const tick = () => {
        send({type: "ping", sent: performance.now()});
        n += 1;
        clockTimer = setTimeout(tick, n < 8 ? 250 : 3000);
      };
      tick();
    }
    function clockSample(m) {
      const t4 = performance.now();
      const delay = (t4 - m.sent) - (m.replied - m.received);
      const sample = {offset: ((m.received - m.sent) + (m.replied - t4)) / 2, delay};
      samples.push(sample);
      if (samples.length > 8) samples.shift();
      const best = samples.reduce((a, b) => (b.delay < a.delay ? b : a));
      offset = best.offset; bestDelay = best.delay;
      window.bellkeysClock = {offset, delay: bestDelay};
    }

    // A screen that sleeps drops the Wi-Fi: ask it to stay on where the browser lets a plain
    // http:// page do so (the Screen Wake Lock needs a secure context), else say so.
    async function keepAwake() {
      if (window.isSecureContext && navigator.wakeLock) {
        try { await navigator.wakeLock.request("screen"); return; } catch (e) { /* fall through */ }
      }
      $("note").textContent = "Keep this screen on while you play.";
    }

    const saved = sessionStorage.getItem("bellkeys");
    if (saved) {
      try { wanted = JSON.parse(saved); $("code").value = wanted.code; $("name").value = wanted.name; connect(); } catch (e) { wanted = null; }
    }
    </script>
    </body>
    </html>
    """##
