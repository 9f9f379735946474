import BellkeysClassroom
import Testing

@Suite struct ClassroomJoining {
    let bells = (60...72).map { ClassroomBell(note: $0, name: "N\($0)", damps: $0 != 72) }
    var code: JoinCode {
        var g = FixedGenerator()
        return JoinCode(using: &g)
    }

    @Test func joiningTakesTheCodeAndNamesAreMadeUnique() {
        let room = Classroom(bells: bells, code: code)
        #expect(room.code.digits.count == 4)
        guard
            case .joined(let id, let welcome, _) = room.join(
                connection: 1, address: "10.0.0.5", code: room.code.digits, name: "Sam", at: 0)
        else {
            Issue.record("not joined")
            return
        }
        let token = room.devices[0].token
        #expect(token.count == 16 && token.allSatisfy(\.isHexDigit))
        #expect(
            id == 1
                && welcome.hasPrefix(
                    "{\"type\":\"welcome\",\"id\":1,\"name\":\"Sam\",\"resume\":\"\(token)\",\"bells\":[{\"note\":60,")
        )
        guard
            case .joined(_, let second, _) = room.join(
                connection: 2, address: "10.0.0.6", code: room.code.digits, name: "Sam", at: 0)
        else {
            Issue.record("not joined")
            return
        }
        #expect(second.contains("\"name\":\"Sam 2\""))
        let wrong = room.join(
            connection: 3, address: "10.0.0.7", code: "0000" == room.code.digits ? "0001" : "0000", name: "Eve", at: 0)
        guard case .refused(let reply) = wrong else {
            Issue.record("joined with a wrong code")
            return
        }
        #expect(reply.contains("\"why\":\"code\""))
        #expect(room.counters.wrongCodes == 1 && room.devices.count == 2)
        // A sixth guess from one address within the minute is refused unread, even the right code.
        for k in 0..<4 {
            _ = room.join(
                connection: 10 + k, address: "10.0.0.7", code: room.code.digits == "0000" ? "0001" : "0000",
                name: "Eve", at: 1)
        }
        guard
            case .refused(let locked) = room.join(
                connection: 20, address: "10.0.0.7", code: room.code.digits, name: "Eve", at: 2)
        else {
            Issue.record("guessing was not locked")
            return
        }
        #expect(locked.contains("\"why\":\"locked\"") && room.counters.lockedOut == 1 && room.counters.wrongCodes == 5)
    }

    @Test func aDeviceComesBackWithItsBellsAndAStaleTokenIsNoGuess() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 1, address: "10.0.0.5", code: room.code.digits, name: "Sam", at: 0)
        #expect(room.deal([62, 64], to: 1))
        let token = room.devices[0].token
        // The Wi-Fi dropped; the page comes back on connection 9 with its token.
        guard
            case .joined(let id, let welcome, let replaced) = room.join(
                connection: 9, address: "10.0.0.5", code: room.code.digits,
                name: "Sam", resume: token, at: 1)
        else {
            Issue.record("not resumed")
            return
        }
        #expect(id == 1 && replaced == 1 && room.devices.count == 1 && room.device(connection: 9)?.dealt == [62, 64])
        #expect(welcome.contains("\"name\":\"Sam\"") && welcome.contains("{\"note\":62,"))
        // A token from before a restart: refused, and not counted as a wrong code (30 pages
        // coming back to a new room would otherwise lock it).
        for k in 0..<40 {
            guard
                case .refused(let reply) = room.join(
                    connection: 20 + k, address: "10.0.0.\(k % 3)", code: "1234", name: "Old",
                    resume: "00000000deadbeef", at: 2)
            else {
                Issue.record("a stale token joined")
                return
            }
            #expect(reply.contains("\"why\":\"changed\""))
        }
        #expect(room.counters.wrongCodes == 0)
        guard case .joined = room.join(connection: 99, address: "10.0.0.1", code: room.code.digits, name: "New", at: 3)
        else {
            Issue.record("the room was locked by stale tokens")
            return
        }
    }

    @Test func oneAddressMayNotFillTheClassroom() {
        let room = Classroom(bells: bells, code: code)
        for k in 0..<4 {
            guard case .joined = room.join(connection: k, address: "10.0.0.9", code: room.code.digits, name: "P", at: 0)
            else {
                Issue.record("device \(k) refused")
                return
            }
        }
        guard
            case .refused(let reply) = room.join(
                connection: 4, address: "10.0.0.9", code: room.code.digits, name: "P", at: 0)
        else {
            Issue.record("a fifth device from one address joined")
            return
        }
        #expect(reply.contains("\"why\":\"full\"") && room.counters.full == 1)
        // This machine itself (the teacher's) is not limited.
        guard
            case .joined = room.join(
                connection: 5, address: "10.0.0.9", code: room.code.digits, name: "P", trusted: true, at: 0)
        else {
            Issue.record("the trusted machine was limited")
            return
        }
    }

    @Test func theClassroomIsCapped() {
        var limits = ClassroomLimits()
        limits.maximumDevices = 2
        let room = Classroom(bells: bells, code: code, limits: limits)
        for k in 1...2 { _ = room.join(connection: k, address: "a\(k)", code: room.code.digits, name: "P\(k)", at: 0) }
        guard
            case .refused(let reply) = room.join(
                connection: 3, address: "a3", code: room.code.digits, name: "P3", at: 0)
        else {
            Issue.record("a third device joined")
            return
        }
        #expect(reply.contains("\"why\":\"full\"") && room.counters.full == 1)
        room.leave(connection: 1)
        guard case .joined = room.join(connection: 3, address: "a3", code: room.code.digits, name: "P3", at: 0) else {
            Issue.record("no room after one left")
            return
        }
    }

    @Test func strikesPlayOnlyDealtBellsWithinTheLimit() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 7, address: "a", code: room.code.digits, name: "Ada", at: 0)
        // Free play: every bell.
        #expect(room.perform(.strike(note: 65, velocity: 90), connection: 7, at: 0) == .on(note: 65, velocity: 90))
        #expect(room.perform(.strike(note: 59, velocity: 90), connection: 7, at: 0) == nil) // not a bell
        #expect(room.perform(.strike(note: 60, velocity: 90), connection: 8, at: 0) == nil) // not joined
        #expect(room.deal([62, 64, 62], to: 1))
        #expect(room.device(id: 1)?.dealt == [62, 64] && room.mode == .dealt)
        #expect(room.perform(.strike(note: 65, velocity: 90), connection: 7, at: 1) == nil)
        #expect(room.counters.notHeld == 2)
        #expect(room.perform(.damp(note: 64), connection: 7, at: 1) == .off(note: 64))
        #expect(room.perform(.release(note: 62), connection: 7, at: 1) == .off(note: 62))
        room.fixedVelocity = 100
        #expect(room.perform(.strike(note: 62, velocity: 3), connection: 7, at: 1) == .on(note: 62, velocity: 100))
        // Burst 20 (two taken already at t = 0 and 1 ns), then 10 a second.
        var played = 2
        for _ in 0..<40 where room.perform(.strike(note: 62, velocity: 50), connection: 7, at: 2) != nil { played += 1 }
        #expect(played == 20 && room.counters.rateLimited == 22)
        #expect(
            room.perform(.strike(note: 62, velocity: 50), connection: 7, at: 100_000_002)
                == .on(note: 62, velocity: 100))
        #expect(room.device(id: 1)?.strikes == 21 && room.device(id: 1)?.rateLimited == 22)
        #expect(room.deal([99], to: 1) == false && room.deal([60], to: 5) == false)
    }

    @Test func dealingRoundGivesEveryBellOnce() {
        for devices in [1, 3, 5, 13, 20] {
            let room = Classroom(bells: bells, code: code)
            for k in 0..<devices {
                _ = room.join(connection: k, address: "a\(k)", code: room.code.digits, name: "P\(k)", at: 0)
            }
            room.dealRound()
            let dealt = room.devices.flatMap(\.dealt)
            if devices <= 13 {
                #expect(dealt.sorted() == Array(60...72), "\(devices) devices")
                #expect(
                    room.devices.allSatisfy { $0.dealt.count == 13 / devices || $0.dealt.count == 13 / devices + 1 })
            } else {
                #expect(Set(dealt) == Set(60...72) && room.devices.allSatisfy { $0.dealt.count == 1 })
            }
        }
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 1, address: "a", code: room.code.digits, name: "A", at: 0)
        room.dealRound()
        room.freePlay()
        #expect(room.mode == .free && room.held(by: room.devices[0]) == Array(60...72))
    }

    @Test func theTeacherRemovesADevice() {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 4, address: "a", code: room.code.digits, name: "A", at: 0)
        #expect(room.remove(id: 1) == 4)
        #expect(room.remove(id: 1) == nil && room.devices.isEmpty && room.counters.removed == 1)
    }

    @Test func theTeachersViewIsJSONWithEveryCounter() throws {
        let room = Classroom(bells: bells, code: code)
        _ = room.join(connection: 4, address: "10.1.2.3", code: room.code.digits, name: "Zoë \"Z\" </script>", at: 0)
        let json = room.teacherJSON(extra: [("joinURL", jsonQuoted("http://10.0.0.1:8080/"))])
        #expect(json.contains("\"name\":\"Zoë \\\"Z\\\" \\u003c/script>\""))
        #expect(json.contains("\"maximumDevices\":64,\"strikesPerSecond\":10.0,\"strikeBurst\":20.0"))
        #expect(
            json.contains(
                "\"counters\":{\"malformed\":0,\"wrongCodes\":0,\"lockedOut\":0,\"full\":0,\"rateLimited\":0,\"notHeld\":0,\"removed\":0}"
            ))
        #expect(json.hasSuffix(",\"joinURL\":\"http://10.0.0.1:8080/\"}"))
        #expect(jsonQuoted("a\u{01}\u{2028}\n") == "\"a\\u0001\\u2028\\n\"")
        #expect(Classroom.litJSON([60, 64]) == "{\"type\":\"lit\",\"notes\":[60,64]}")
    }
}

/// A generator that always gives the same numbers (the code is then known to the test).
struct FixedGenerator: RandomNumberGenerator {
    var state: UInt64 = 42
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}
