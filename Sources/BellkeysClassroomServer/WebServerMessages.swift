import BellkeysClassroom
import BellkeysControl
import BellkeysSystem
import Glibc

// MARK: What the pupils and the teacher say (thread: server)

extension WebServer {
    func pupilMessage(_ c: Connection, _ payload: [UInt8], now: UInt64) {
        let message: PupilMessage
        do {
            message = try readPupilMessage(payload)
        } catch {
            // A page not joined yet is told why (a name it cannot take, say) before the close.
            if classroom.device(connection: c.id) == nil {
                send(c, text: "{\"type\":\"refused\",\"why\":\"message\",\"text\":\(jsonQuoted(error.description))}")
            }
            malformed(c, code: WebSocketClose.policy, reason: error.description, now: now)
            return
        }
        switch message {
        case .join(let code, let name, let resume):
            switch classroom.join(
                connection: c.id, address: c.peer, code: code, name: name, resume: resume,
                trusted: c.peer == c.local, at: now)
            {
            case .joined(_, let welcome, let replaced):
                send(c, text: welcome)
                send(c, text: Classroom.litJSON(lastLit))
                joinedNow.store(classroom.devices.count, ordering: .relaxed)
                // The teacher's status line counts devices: the control thread may be asleep.
                link.wakeControl()
                // The device came back on a new connection: the old one goes, the device stays.
                if let replaced, let old = connections.first(where: { $0.id == replaced }) {
                    closeWebSocket(
                        old, code: WebSocketClose.policy, reason: "this device joined again", now: now, leave: false)
                }
            case .refused(let reply):
                send(c, text: reply)
                closeWebSocket(c, code: WebSocketClose.policy, reason: "not joined", now: now)
            }
            teacherDirty = true
        case .ping(let sent):
            // NTP's four times, two of them here: received and replied (the same moment).
            let ms = Double(now) / 1e6
            send(c, text: "{\"type\":\"pong\",\"sent\":\(sent),\"received\":\(ms),\"replied\":\(ms)}")
        default:
            guard let device = classroom.device(connection: c.id) else {
                malformed(c, code: WebSocketClose.policy, reason: "join first", now: now)
                return
            }
            switch classroom.perform(message, connection: c.id, at: now) {
            case .on(let note, let velocity)?:
                hand(
                    .noteOn(
                        device: device.id, note: note, velocity: velocity, arrival: MonotonicInstant(nanoseconds: now)))
                teacherDirty = true
                if followRunning, let follow, case .strike(_, _, let at) = message {
                    // The tap's time as the page stamped it on our clock, if it is plausible.
                    var tap = now
                    if let at, abs(at * 1e6 - Double(now)) <= 1e9 { tap = UInt64(at * 1e6) }
                    if let (result, ms, _) = follow.judge(device: device.id, note: note, at: tap) {
                        send(
                            c,
                            text:
                                "{\"type\":\"judged\",\"note\":\(note),\"result\":\"\(result.rawValue)\",\"ms\":\(Int(ms.rounded()))}"
                        )
                    }
                }
            case .off(let note)?:
                hand(.noteOff(device: device.id, note: note, arrival: MonotonicInstant(nanoseconds: now)))
            case nil:
                teacherDirty = true
            }
        }
    }

    func teacherMessage(_ c: Connection, _ payload: [UInt8], now: UInt64) {
        let message: TeacherMessage
        do {
            message = try readTeacherMessage(payload)
        } catch {
            // The teacher's page is ours: a bad message is a bug to see, not a reason to close.
            send(c, text: "{\"type\":\"error\",\"text\":\(jsonQuoted(error.description))}")
            return
        }
        switch message {
        case .deal(let id, let notes):
            if classroom.deal(notes, to: id) { sendBells() }
        case .dealRound:
            classroom.dealRound()
            sendBells()
        case .free:
            classroom.freePlay()
            sendBells()
        case .remove(let id):
            if let connection = classroom.remove(id: id), let pupil = connections.first(where: { $0.id == connection })
            {
                send(pupil, text: "{\"type\":\"removed\",\"text\":\"The teacher took this device out of the room.\"}")
                hand(.gone(device: id, arrival: MonotonicInstant(nanoseconds: now)))
                closeWebSocket(
                    pupil, code: WebSocketClose.policy, reason: "removed by the teacher", now: now, leave: false)
            }
        case .volume(let decibels):
            hand(.volume(decibels: decibels))
        case .dampAll:
            hand(.dampAll(arrival: MonotonicInstant(nanoseconds: now)))
        case .reverb(let preset):
            hand(.reverb(index: TeacherMessage.presets.firstIndex(of: preset) ?? 0))
        case .set(let index):
            // (A map of one instrument is one set without a name.)
            guard index < sets.count, sets[index].set.name != nil else {
                let fix =
                    sets.first?.set.name != nil
                    ? "give 0 to \(sets.count - 1)" : "the map is one instrument; a map with sets has several"
                send(c, text: "{\"type\":\"error\",\"text\":\"set: there is no set \(index); \(fix)\"}")
                return
            }
            hand(.set(index: index, arrival: MonotonicInstant(nanoseconds: now)))
        case .velocity(let fixed):
            classroom.fixedVelocity = fixed
            sendBells()
        case .follow(let index, let tempo):
            guard index < tunes.count else {
                send(
                    c,
                    text:
                        "{\"type\":\"error\",\"text\":\"tune: there is no tune \(index); give 0 to \(tunes.count - 1)\"}"
                )
                return
            }
            guard !tunes[index].cues.isEmpty else {
                let text =
                    "tune: no note of \(tunes[index].name) falls on the bells of \(classroom.setName ?? "the map")"
                    + "; choose another tune, or a set with its notes"
                send(c, text: "{\"type\":\"error\",\"text\":\(jsonQuoted(text))}")
                return
            }
            // A lead-in of 3 s: the pages count the first bells in.
            let started = FollowAlong(tune: tunes[index], tempo: tempo, start: now + 3_000_000_000)
            follow = started
            followRunning = true
            let text =
                "{\"type\":\"follow\",\"state\":\"started\",\"name\":\(jsonQuoted(started.tune.name)),\"tempo\":\(tempo)"
                + ",\"startsAt\":\(Double(started.start) / 1e6)}"
            for p in connections where p.role == .pupil { send(p, text: text) }
        case .stopFollow:
            stopFollow()
        }
        teacherDirty = true
    }

    /// Every pupil's bells, after a deal.
    func sendBells() {
        for c in connections where c.role == .pupil {
            if let device = classroom.device(connection: c.id) { send(c, text: classroom.bellsJSON(device)) }
        }
    }
}
