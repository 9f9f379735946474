import BellkeysClassroom
import Testing

func read(_ text: String) throws(PupilMessageError) -> PupilMessage { try readPupilMessage(Array(text.utf8)) }

func refusal(_ text: String) -> PupilMessageError? {
    do {
        _ = try read(text)
        return nil
    } catch { return error }
}

@Suite struct PupilMessages {
    @Test func everyMessageReadsAsWritten() throws {
        #expect(try read(#"{"type":"join","code":"0481","name":"Ada"}"#) == .join(code: "0481", name: "Ada"))
        #expect(try read(#"{"note":60,"velocity":100,"type":"strike"}"#) == .strike(note: 60, velocity: 100))
        #expect(try read(#"{"type":"strike","note":127,"velocity":1}"#) == .strike(note: 127, velocity: 1))
        #expect(
            try read(#"{"type":"strike","note":62,"velocity":90,"at":1234.5}"#)
                == .strike(note: 62, velocity: 90, at: 1234.5))
        #expect(try read(#"{"type":"release","note":0}"#) == .release(note: 0))
        #expect(try read(#"{"type":"damp","note":72}"#) == .damp(note: 72))
        #expect(try read(#"{"type":"ping","sent":1234.5}"#) == .ping(sent: 1234.5))
        #expect(
            try read(#"{"type":"join","code":"9999","name":"Zoë Müller-Łukasz"}"#)
                == .join(code: "9999", name: "Zoë Müller-Łukasz"))
        // Emoji sequences and names in many scripts need the zero-width joiners.
        #expect(
            try read("{\"type\":\"join\",\"code\":\"1111\",\"name\":\"Mia \u{1F469}\u{200D}\u{1F4BB}\"}")
                == .join(code: "1111", name: "Mia \u{1F469}\u{200D}\u{1F4BB}"))
        #expect(
            try read(#"{"type":"join","code":"1111","name":"A","resume":"0123456789abcdef"}"#)
                == .join(code: "1111", name: "A", resume: "0123456789abcdef"))
    }

    /// Each refusal names the field and says what to send instead.
    @Test func badMessagesAreRefusedNamingTheField() {
        let cases: [(String, String)] = [
            (#"{"type":"strike","note":60}"#, "velocity"),
            (#"{"type":"strike","note":128,"velocity":100}"#, "note"),
            (#"{"type":"strike","note":60.5,"velocity":100}"#, "note"),
            (#"{"type":"strike","note":60,"velocity":0}"#, "velocity"),
            (#"{"type":"strike","note":"60","velocity":100}"#, "note"),
            (#"{"type":"strike","note":60,"velocity":100,"extra":1}"#, "extra"),
            (#"{"type":"strike","note":60,"velocity":100,"at":-1}"#, "at"),
            (#"{"type":"strike","note":60,"velocity":100,"at":"now"}"#, "at"),
            (#"{"type":"explode"}"#, "type"),
            (#"{"type":7}"#, "type"),
            (#"{"note":60}"#, "type"),
            (#"{"type":"join","code":"48211","name":"Ada"}"#, "code"),
            (#"{"type":"join","code":"48a1","name":"Ada"}"#, "code"),
            (#"{"type":"join","code":"4821","name":""}"#, "name"),
            (#"{"type":"join","code":"4821","name":"a\u0007b"}"#, "name"),
            (#"{"type":"join","code":"4821","name":"\u202eevil"}"#, "name"),
            (#"{"type":"join","code":"4821","name":"abcdefghijklmnopqrstuvwxy"}"#, "name"),
            (#"{"type":"join","code":"4821","name":"A","resume":"XYZ"}"#, "resume"),
            (#"{"type":"ping","sent":-1}"#, "sent"),
            (#"{"type":"ping","sent":"now"}"#, "sent"),
            (#"[1,2]"#, "message"),
            (#"{"type":"strike","#, "message"),
            (#"{"type":{"deep":{"deeper":1}}}"#, "message"),
            (#"{"type":"strike","note":60,"note":61,"velocity":1}"#, "message"),
            ("", "message"),
            (#"{"type":"strike","":6}"#, #""""#), // found by the fuzzer: an empty field name
            ("{\"type\":\"strike\"\u{0}}", "message"), // a NUL in the text
        ]
        for (text, field) in cases {
            let error = refusal(text)
            #expect(error?.field == field, "\(text): \(error.map(String.init(describing:)) ?? "read")")
            #expect(error.map { !$0.fix.isEmpty && !$0.problem.isEmpty } ?? false)
        }
    }

    @Test func anythingLongerThanTheLimitIsRefusedUnread() {
        let long = #"{"type":"ping","sent":1}"# + String(repeating: " ", count: PupilMessage.maximumBytes)
        #expect(refusal(long)?.field == "message")
        #expect(refusal(long)?.problem.contains("more than 256") == true)
        // Just under the limit still reads.
        let padded = #"{"type":"ping","sent":1"# + String(repeating: " ", count: PupilMessage.maximumBytes - 24) + "}"
        #expect(padded.utf8.count == PupilMessage.maximumBytes)
        #expect((try? read(padded)) == .ping(sent: 1))
    }

    /// A field name or value shown back (to the teacher's count of refusals) is cut to 32
    /// characters, control characters replaced.
    @Test func whatIsShownBackIsShortAndPrintable() {
        let key = String(repeating: "k", count: 100)
        let error = refusal(#"{"type":"damp","note":1,""# + key + #"":1}"#)
        #expect(error?.field == String(repeating: "k", count: 32) + "…")
        #expect(refusal(#"{"type":"a\u001bb"}"#)?.problem == #""a?b" is not a message"#)
    }
}

@Suite struct JoinGuards {
    struct Counter: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return state
        }
    }

    @Test func joinCodesAreFourDigitsAndMatchOnlyThemselves() {
        var generator = Counter(state: 1)
        var seen = Set<String>()
        for _ in 0..<200 {
            let code = JoinCode(using: &generator)
            #expect(code.digits.count == 4 && code.digits.allSatisfy(\.isNumber))
            #expect(code.matches(code.digits))
            #expect(
                !code.matches(code.digits + "0") && !code.matches("") && !code.matches(String(code.digits.dropLast())))
            seen.insert(code.digits)
        }
        #expect(seen.count > 150)
        #expect(JoinCode().digits.count == 4)
    }

    @Test func wrongGuessesAreLimitedPerAddressAndOverall() {
        var guard_ = JoinGuard(perAddress: 5, overall: 30, windowSeconds: 60)
        let second: UInt64 = 1_000_000_000
        for k in 0..<5 {
            #expect(guard_.mayTry(from: "10.0.0.2", at: UInt64(k) * second) == .allowed)
            guard_.wrongCode(from: "10.0.0.2", at: UInt64(k) * second)
        }
        // The sixth try from that address, 10 s into the window: refused for the 50 s left.
        #expect(guard_.mayTry(from: "10.0.0.2", at: 10 * second) == .refused(secondsLeft: 50))
        #expect(guard_.mayTry(from: "10.0.0.3", at: 10 * second) == .allowed)
        // 25 more wrong codes from 25 addresses: 30 in all, and now nobody may try.
        for k in 0..<25 { guard_.wrongCode(from: "10.0.1.\(k)", at: 11 * second) }
        #expect(guard_.wrongGuesses == 30)
        #expect(guard_.mayTry(from: "10.0.0.9", at: 12 * second) == .refused(secondsLeft: 48))
        // A new window: everyone may try again.
        #expect(guard_.mayTry(from: "10.0.0.2", at: 60 * second) == .allowed)
        #expect(guard_.wrongGuesses == 0)
    }

    @Test func aFloodingDeviceIsHeldToTheRate() {
        var limiter = StrikeLimiter(perSecond: 10, burst: 20)
        // 100 strikes in the same instant: the burst of 20 sounds, 80 are refused.
        let allowed = (0..<100).filter { _ in limiter.allow(at: 1_000) }.count
        #expect(allowed == 20 && limiter.refused == 80)
        // Then one strike every millisecond for 2 s: 10 a second get through (20 in all).
        var later = 0
        for ms in 1...2_000 where limiter.allow(at: 1_000 + UInt64(ms) * 1_000_000) { later += 1 }
        #expect(later == 20)
        // A pupil ringing 8 times a second never loses a strike.
        var pupil = StrikeLimiter()
        let rung = (0..<80).filter { pupil.allow(at: UInt64($0) * 125_000_000) }.count
        #expect(rung == 80 && pupil.refused == 0)
    }
}
