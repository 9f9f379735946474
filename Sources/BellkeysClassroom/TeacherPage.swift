// The teacher's page, served only to the classroom computer itself (or with the teacher key):
// the join address, the QR code large and the room code for the projector; who has joined;
// dealing the bells; master volume, damp all, the room, velocity; and the limits and
// counters that show what the room's devices are doing.

public let teacherPageHTML = ##"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>bellkeys: the classroom</title>
    <style>
    * { box-sizing: border-box; }
    body { margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f5f6f8; color: #15171c; }
    main { display: grid; grid-template-columns: minmax(280px, 420px) 1fr; gap: 20px; padding: 20px; }
    @media (max-width: 800px) { main { grid-template-columns: 1fr; } }
    section { background: #fff; border-radius: 16px; padding: 16px 18px; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
    h1 { margin: 0 0 8px; font-size: 22px; }
    h2 { margin: 0 0 10px; font-size: 18px; }
    #qr { width: 100%; image-rendering: pixelated; border-radius: 8px; }
    #address { font-size: 26px; font-weight: 700; word-break: break-all; }
    #code { font-size: 64px; font-weight: 800; letter-spacing: .15em; }
    button, select { font-size: 16px; padding: 8px 12px; border-radius: 10px; border: 1px solid #c7cbd4; background: #fff; cursor: pointer; }
    button.main { background: #4f7cff; color: #fff; border: 0; }
    .row { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; margin-bottom: 10px; }
    table { width: 100%; border-collapse: collapse; }
    th, td { text-align: left; padding: 6px 6px; border-bottom: 1px solid #eceef2; vertical-align: middle; }
    .chip { display: inline-block; min-width: 40px; padding: 4px 7px; margin: 2px; border-radius: 8px; font-weight: 700; cursor: pointer;
      text-align: center; border: 2px solid transparent; opacity: .35; }
    .chip.on { opacity: 1; border-color: #15171c; }
    .chip.lit { box-shadow: 0 0 0 3px #ffd400; }
    .counters { display: grid; grid-template-columns: 1fr auto; gap: 2px 16px; font-size: 15px; }
    .counters span:nth-child(2n) { text-align: right; font-variant-numeric: tabular-nums; }
    #error { color: #b00020; }
    </style>
    </head>
    <body>
    <main>
    <div>
      <section>
        <h1>🔔 Join the bells</h1>
        <img id="qr" src="/qr.svg" alt="QR code of the join address">
        <div id="address"></div>
        <div>Room code</div>
        <div id="code">----</div>
      </section>
      <section style="margin-top: 20px">
        <h2>Limits and counters</h2>
        <div class="counters" id="counters"></div>
      </section>
    </div>
    <div>
      <section>
        <h2>The room</h2>
        <div class="row">
          <button class="main" id="dealRound">Deal all 13 round the room</button>
          <button id="free">Free play: everyone gets all 13</button>
          <button id="dampAll">Damp all</button>
        </div>
        <div class="row">
          <label>Volume <input id="volume" type="range" min="-40" max="12" step="1"> <span id="volumeText"></span></label>
          <label id="setLabel" hidden>Set <select id="set"></select></label>
          <label>Room <select id="reverb"><option>off</option><option>room</option><option>hall</option><option>church</option></select></label>
          <label>Velocity <select id="velocity"><option value="">as struck (top of the bell is loud)</option><option value="100">fixed</option></select></label>
        </div>
        <div id="error"></div>
      </section>
      <section style="margin-top: 20px">
        <h2>Follow-along</h2>
        <div class="row">
          <label>Tune <select id="tune"></select></label>
          <label>Tempo <input id="tempo" type="number" min="50" max="200" step="5" value="100" style="width: 5em"> %</label>
          <button class="main" id="followStart">Start</button>
          <button id="followStop">Stop</button>
        </div>
        <p id="followText">Each phone shows when its own bells are due (a countdown, then the bell glows); the tune is not played: the pupils ring it.</p>
      </section>
      <section style="margin-top: 20px">
        <h2 id="devicesTitle">Devices</h2>
        <p id="mode"></p>
        <table><thead><tr><th>Name</th><th>Bells (click to give or take)</th><th>Strikes</th><th>Over the limit</th><th>Follow-along: on time · early · late · missed</th><th></th></tr></thead>
        <tbody id="devices"></tbody></table>
      </section>
    </div>
    </main>
    <script>
    "use strict";
    const $ = (id) => document.getElementById(id);
    let socket = null, room = null, lit = new Set(), pointerDown = false, pending = false;
    // A redraw between a press and its release would lose the click: wait for the release.
    document.addEventListener("pointerdown", () => { pointerDown = true; });
    document.addEventListener("pointerup", () => { pointerDown = false; if (pending) { pending = false; setTimeout(draw, 0); } });
    function send(m) { if (socket && socket.readyState === 1) socket.send(JSON.stringify(m)); }
    function connect() {
      socket = new WebSocket("ws://" + location.host + "/teacher/ws" + location.search);
      socket.onmessage = (event) => {
        const m = JSON.parse(event.data);
        if (m.type === "room") { room = m; draw(); }
        else if (m.type === "lit") { lit = new Set(m.notes); drawLights(); }
        else if (m.type === "error") { $("error").textContent = m.text; }
      };
      socket.onclose = () => setTimeout(connect, 1000);
    }
    $("dealRound").onclick = () => send({type: "dealRound"});
    $("free").onclick = () => send({type: "free"});
    $("dampAll").onclick = () => send({type: "dampAll"});
    $("followStart").onclick = () => send({type: "follow", tune: Number($("tune").value), tempo: Math.max(50, Math.min(200, Number($("tempo").value) || 100))});
    $("followStop").onclick = () => send({type: "stopFollow"});
    $("volume").oninput = () => { $("volumeText").textContent = $("volume").value + " dB"; };
    $("volume").onchange = () => send({type: "volume", decibels: Number($("volume").value)});
    // A menu keeps the focus after a choice, and one with the focus is not redrawn: let go of it,
    // so that it shows what bellkeys plays (a set the engine took, or one `p` chose meanwhile).
    $("reverb").onchange = () => { send({type: "reverb", preset: $("reverb").value}); $("reverb").blur(); };
    $("set").onchange = () => { send({type: "set", index: Number($("set").value)}); $("set").blur(); };
    $("velocity").onchange = () => send({type: "velocity", fixed: $("velocity").value ? Number($("velocity").value) : null});

    function draw() {
      if (pointerDown) { pending = true; return; }
      $("address").textContent = room.joinURL;
      $("code").textContent = room.code;
      if (document.activeElement !== $("volume")) { $("volume").value = room.masterDecibels; $("volumeText").textContent = room.masterDecibels + " dB"; }
      if (document.activeElement !== $("reverb")) $("reverb").value = room.reverb;
      // The map's sets (a map of one instrument has one, unnamed: no menu).
      $("setLabel").hidden = room.sets.length < 2;
      if (Array.from($("set").options, (o) => o.textContent).join("\n") !== room.sets.join("\n")) {
        $("set").innerHTML = "";
        room.sets.forEach((name, i) => { const o = document.createElement("option"); o.value = i; o.textContent = name; $("set").appendChild(o); });
      }
      if (document.activeElement !== $("set")) $("set").value = String(room.set);
      const n = room.bells.length;
      $("dealRound").textContent = "Deal all " + n + " round the room";
      $("free").textContent = "Free play: everyone gets all " + n;
      if (document.activeElement !== $("velocity")) $("velocity").value = room.fixedVelocity ? String(room.fixedVelocity) : "";
      // The tunes' notes on the set's bells: their counts change with the set.
      const tunes = room.tunes.map((t) => t.name + " (" + t.cues + " notes)");
      if (Array.from($("tune").options, (o) => o.textContent).join("\n") !== tunes.join("\n")) {
        const chosen = $("tune").value;
        $("tune").innerHTML = "";
        tunes.forEach((text, i) => { const o = document.createElement("option"); o.value = i; o.textContent = text; $("tune").appendChild(o); });
        if (chosen) $("tune").value = chosen;
      }
      const f = room.follow;
      $("followText").textContent = !f ? "Each phone shows when its own bells are due (a countdown, then the bell glows); the tune is not played: the pupils ring it."
        : (f.running ? "Playing " : "Last: ") + f.name + " at " + f.tempo + " %, " + f.cues + " notes. On time: within " + f.onTimeMs
          + " ms of the cue; early or late up to " + f.windowMs + " ms; later than that, missed.";
      $("devicesTitle").textContent = "Devices: " + room.devices.length + " of " + room.maximumDevices;
      $("mode").textContent = room.mode === "free" ? "Free play: every device holds all the bells." : "Dealt: each device rings the bells it was given.";
      const body = $("devices");
      body.innerHTML = "";
      for (const d of room.devices) {
        const tr = document.createElement("tr");
        const name = document.createElement("td");
        name.textContent = d.name;
        name.title = d.address;
        tr.appendChild(name);
        const chips = document.createElement("td");
        for (const bell of room.bells) {
          const chip = document.createElement("span");
          chip.className = "chip" + (d.bells.includes(bell.note) ? " on" : "");
          chip.dataset.note = bell.note;
          chip.style.background = bell.colour;
          chip.textContent = bell.name;
          if (room.mode === "free") chip.title = "Free play: every device holds every bell. Deal them round first, or click to give this device only this bell.";
          chip.onclick = () => {
            const held = room.mode === "free" ? [] : d.bells.slice();
            const i = held.indexOf(bell.note);
            if (i >= 0) held.splice(i, 1); else held.push(bell.note);
            send({type: "deal", device: d.id, notes: held});
          };
          chips.appendChild(chip);
        }
        tr.appendChild(chips);
        const t = d.follow;
        const tally = t ? t.onTime + " · " + t.early + " · " + t.late + " · " + t.missed + (t.lastMs !== null ? " (last " + (t.lastMs > 0 ? "+" : "") + t.lastMs + " ms)" : "") : "–";
        for (const v of [d.strikes, d.rateLimited, tally]) { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); }
        const td = document.createElement("td");
        const remove = document.createElement("button");
        remove.textContent = "Remove";
        remove.onclick = () => send({type: "remove", device: d.id});
        td.appendChild(remove);
        tr.appendChild(td);
        body.appendChild(tr);
      }
      const c = room.counters;
      const rows = [
        ["Devices at most", room.maximumDevices],
        ["Strikes a second per device", room.strikesPerSecond + " (burst " + room.strikeBurst + ")"],
        ["Connections now / at most", room.connections + " / " + room.maximumConnections],
        ["Strikes over the limit (ignored)", c.rateLimited],
        ["Wrong room codes", c.wrongCodes],
        ["Joins refused: too many wrong codes", c.lockedOut],
        ["Joins refused: room full", c.full],
        ["Closed: malformed messages", c.malformed],
        ["Closed: flooding (over 50 messages a second)", room.floodClosed],
        ["Connections refused (too many at once)", room.connectionsRefused],
        ["Closed to make room (unfinished, or not joined)", room.connectionsGaveWay],
        ["Requests refused", room.httpRefused],
        ["Removed by you", c.removed],
        ["Lost on the way to the bells", room.droppedToControl],
      ];
      $("counters").innerHTML = "";
      for (const [k, v] of rows) {
        const a = document.createElement("span"); a.textContent = k;
        const b = document.createElement("span"); b.textContent = v;
        $("counters").append(a, b);
      }
      drawLights();
    }
    function drawLights() {
      for (const chip of document.querySelectorAll(".chip")) chip.classList.toggle("lit", lit.has(Number(chip.dataset.note)));
    }
    connect();
    </script>
    </body>
    </html>
    """##

/// What a device that is not the teacher's sees at /teacher.
public let notTeacherPageHTML = ##"""
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
    <title>bellkeys: teacher only</title>
    <style>body{font-family:system-ui,sans-serif;margin:40px auto;max-width:34em;padding:0 16px;font-size:19px;line-height:1.5}</style></head>
    <body><h1>The teacher's page</h1>
    <p>This page opens on the classroom computer that plays the bells, or with the teacher key that bellkeys printed when it started
    (<code>/teacher?key=…</code>).</p>
    <p><a href="/">Ring the bells instead</a></p></body></html>
    """##
