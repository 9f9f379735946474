import BellkeysClassroom
import BellkeysControl
import BellkeysSystem
import Glibc

// MARK: What the server says on its own, and hands to the control thread (thread: server)

extension WebServer {
    /// Sends the cues coming due to the devices that hold their bells, and counts the misses.
    func followTick(now: UInt64) {
        guard followRunning, let follow else { return }
        for cue in follow.cuesToSend(
            at: now,
            holders: { note in
                classroom.devices.filter { classroom.held(by: $0).contains(note) }.map(\.id)
            })
        {
            let text = "{\"type\":\"cue\",\"note\":\(cue.note),\"at\":\(Double(cue.at) / 1e6),\"i\":\(cue.index)}"
            for id in cue.expected {
                if let d = classroom.device(id: id), let c = connections.first(where: { $0.id == d.connection }) {
                    send(c, text: text)
                }
            }
        }
        for (id, index) in follow.closeWindows(at: now) {
            teacherDirty = true
            if let d = classroom.device(id: id), let c = connections.first(where: { $0.id == d.connection }) {
                send(
                    c,
                    text: "{\"type\":\"judged\",\"note\":\(follow.cues[index].note),\"result\":\"missed\",\"ms\":null}")
            }
        }
        if follow.isOver { stopFollow() }
    }

    /// Deals the classroom's bells from the set the phones' channel plays, when the control
    /// thread publishes another (the teacher's choice, `p` at the terminal, a keyboard's program
    /// change, a reload): each page gets its bells and the set's name. A follow-along under way
    /// stops if the new set's notes differ (its cues were for the old bells); the next one cues
    /// the new.
    func followSet() {
        let published = link.setIndex.load(ordering: .acquiring)
        let generation = published >> 8, index = published & 0xFF
        if generation != setsGeneration {
            guard let reloaded = link.takeSets(generation: generation) else { return }
            sets = reloaded
            setsGeneration = generation
            classroomSet = -1
        }
        guard index != classroomSet, sets.indices.contains(index) else { return }
        classroomSet = index
        let set = sets[index].set
        if classroom.changeSet(name: set.name, bells: set.bells) { stopFollow() }
        sendBells()
        teacherDirty = true
    }

    /// Ends the follow-along (its tallies stay for the teacher); the pages clear their cues.
    func stopFollow() {
        guard followRunning else { return }
        followRunning = false
        teacherDirty = true
        for p in connections where p.role == .pupil { send(p, text: "{\"type\":\"follow\",\"state\":\"stopped\"}") }
    }

    /// Hands `request` to the control thread, after anything still waiting. A strike that finds
    /// the pipe full is dropped and counted; anything else waits (at most 4096, then the oldest
    /// is dropped and counted), so a release is never lost to a busy moment.
    func hand(_ request: ClassroomLink.Request) {
        if !waiting.isEmpty { handWaiting() }
        if waiting.isEmpty, link.send(request) { return }
        if case .noteOn = request {
            link.droppedToControl.add(1, ordering: .relaxed)
            return
        }
        if waiting.count >= 4_096 {
            waiting.removeFirst()
            link.droppedToControl.add(1, ordering: .relaxed)
        }
        waiting.append(request)
    }

    func handWaiting() {
        var sent = 0
        while sent < waiting.count, link.send(waiting[sent]) { sent += 1 }
        if sent > 0 { waiting.removeFirst(sent) }
    }

    /// Answers each phone whose strike the control thread has queued.
    func answerQueued(now: UInt64) {
        for (device, note, arrival) in link.takeQueued() {
            guard let d = classroom.device(id: device), let c = connections.first(where: { $0.id == d.connection })
            else { continue }
            let ms = Double(now &- arrival.nanoseconds) / 1e6
            send(c, text: "{\"type\":\"rang\",\"note\":\(note),\"queuedAfter\":\(ms)}")
        }
    }

    func broadcastLit() {
        let lit = link.soundingNotes
        guard lit != lastLit else { return }
        lastLit = lit
        let frame = webSocketFrame(.text, Array(Classroom.litJSON(lit).utf8))
        for c in connections where c.role != .http { send(c, frame) }
    }

    func updateTeachers(now: UInt64) {
        guard teacherDirty, now &- lastTeacherUpdate > 200_000_000 else { return }
        let teachers = connections.filter { $0.role == .teacher }
        guard !teachers.isEmpty else { return }
        teacherDirty = false
        lastTeacherUpdate = now
        let extra: [(String, String)] = [
            ("joinURL", jsonQuoted(joinURL)),
            ("masterDecibels", String(Double(link.masterCentibels.load(ordering: .relaxed)) / 100)),
            ("reverb", jsonQuoted(TeacherMessage.presets[min(3, max(0, link.roomIndex.load(ordering: .relaxed)))])),
            ("sets", "[" + sets.map { $0.set.name.map(jsonQuoted) ?? "null" }.joined(separator: ",") + "]"),
            ("set", String(classroomSet)),
            ("connections", String(connections.count)),
            ("maximumConnections", String(settings.maximumConnections)),
            ("connectionsRefused", String(connectionsRefused.load(ordering: .relaxed))),
            ("connectionsGaveWay", String(connectionsGaveWay.load(ordering: .relaxed))),
            ("httpRefused", String(httpRefused.load(ordering: .relaxed))),
            ("floodClosed", String(floodClosed.load(ordering: .relaxed))),
            ("droppedToControl", String(link.droppedToControl.load(ordering: .relaxed))),
            (
                "tunes",
                "["
                    + tunes.map {
                        "{\"name\":\(jsonQuoted($0.name)),\"cues\":\($0.cues.count),\"leftOut\":\($0.leftOut)}"
                    }.joined(separator: ",") + "]"
            ),
            (
                "follow",
                follow.map { f in
                    "{\"running\":\(followRunning),\"name\":\(jsonQuoted(f.tune.name)),\"tempo\":\(f.tempo),\"cues\":\(f.cues.count)"
                        + ",\"onTimeMs\":\(Int(FollowAlong.onTimeMilliseconds)),\"windowMs\":\(Int(FollowAlong.windowMilliseconds))}"
                } ?? "null"
            ),
        ]
        let follow = follow
        let frame = webSocketFrame(
            .text,
            Array(classroom.teacherJSON(extra: extra, device: { id in follow.map { $0.tallyJSON(device: id) } }).utf8))
        // A teacher's page still behind on the last one gets the next instead (never a pile).
        for c in teachers where c.output.count < 64 * 1024 { send(c, frame) }
    }

}
