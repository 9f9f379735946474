import BellkeysClassroom
import Testing

@Suite struct TeacherMessages {
    func read(_ text: String) -> TeacherMessage? { try? readTeacherMessage(Array(text.utf8)) }
    func refusal(_ text: String) -> String? {
        do {
            _ = try readTeacherMessage(Array(text.utf8))
            return nil
        } catch { return error.field }
    }

    @Test func eachMessageIsRead() {
        #expect(read(#"{"type":"deal","device":3,"notes":[60,62]}"#) == .deal(device: 3, notes: [60, 62]))
        #expect(read(#"{"type":"dealRound"}"#) == .dealRound)
        #expect(read(#"{"type":"free"}"#) == .free)
        #expect(read(#"{"type":"remove","device":9}"#) == .remove(device: 9))
        #expect(read(#"{"type":"volume","decibels":-6.5}"#) == .volume(decibels: -6.5))
        #expect(read(#"{"type":"dampAll"}"#) == .dampAll)
        #expect(read(#"{"type":"reverb","preset":"church"}"#) == .reverb(preset: "church"))
        #expect(read(#"{"type":"velocity","fixed":null}"#) == .velocity(fixed: nil))
        #expect(read(#"{"type":"velocity","fixed":100}"#) == .velocity(fixed: 100))
        #expect(read(#"{"type":"set","index":2}"#) == .set(index: 2))
    }

    @Test func refusalsNameTheField() {
        #expect(refusal(#"{"type":"deal","device":3,"notes":[60,200]}"#) == "notes")
        #expect(refusal(#"{"type":"deal","device":0,"notes":[]}"#) == "device")
        #expect(refusal(#"{"type":"deal","device":1,"notes":[1,2,3,4,5,6,7,8,9,10,11,12,13,14]}"#) == "notes")
        #expect(refusal(#"{"type":"volume","decibels":13}"#) == "decibels")
        #expect(refusal(#"{"type":"reverb","preset":"cave"}"#) == "preset")
        #expect(refusal(#"{"type":"set","index":128}"#) == "index")
        #expect(refusal(#"{"type":"set","index":1.5}"#) == "index")
        #expect(refusal(#"{"type":"set"}"#) == "index")
        #expect(refusal(#"{"type":"velocity","fixed":0}"#) == "fixed")
        #expect(refusal(#"{"type":"free","extra":1}"#) == "extra")
        #expect(refusal(#"{"type":"shout"}"#) == "type")
        #expect(refusal(#"[1]"#) == "message")
        #expect(refusal("{\"type\":\"free\"" + String(repeating: " ", count: 1_100) + "}") == "message")
    }

    /// The opening (size, JSON, object, type, fields) is the pupil's reader's, each throwing its
    /// own error: the same words, the teacher's limit and types.
    @Test func theOpeningIsSharedWithThePupilsReader() {
        func teacher(_ text: String) -> TeacherMessageError? {
            do {
                _ = try readTeacherMessage(Array(text.utf8))
                return nil
            } catch { return error }
        }
        let types =
            "give \"type\": deal, dealRound, free, remove, volume, dampAll, reverb, set, velocity, follow or stopFollow"
        #expect(teacher(#"{"device":1}"#)?.description == "type: missing; " + types)
        #expect(teacher(#"{"type":7}"#)?.description == "type: a number, not a string; " + types)
        #expect(teacher(#"{"type":"a\u001bb"}"#)?.description == #"type: "a?b" is not a message; "# + types)
        #expect(
            teacher(#"{"type":"remove","device":1,"x":2}"#)?.description
                == "x: not a field of remove; send only type, device")
        #expect(teacher("[1]")?.description == "message: an array, not an object; send one JSON object")
        #expect(
            teacher("{") != nil && teacher("{")?.field == "message"
                && teacher("{")?.problem.hasPrefix("not JSON") == true)
        #expect(teacher(String(repeating: " ", count: 1_025))?.problem == "1025 bytes, more than 1024")
        // Nested one level deeper than a pupil's: a deal's notes.
        #expect(teacher(#"{"type":"deal","device":1,"notes":[60]}"#) == nil)
        // The pupil's reader says the same of its own.
        #expect(
            pupilRefusal(#"{"type":7}"#)
                == "type: a number, not a string; give \"type\": join, strike, release, damp or ping")
    }

    private func pupilRefusal(_ text: String) -> String? {
        do {
            _ = try readPupilMessage(Array(text.utf8))
            return nil
        } catch { return error.description }
    }
}

@Suite struct QRPictures {
    // A 3×3 "code": dark on the diagonal and at (2, 0).
    let dark: (Int, Int) -> Bool = { x, y in x >= 0 && y >= 0 && x < 3 && y < 3 && (x == y || (x == 2 && y == 0)) }

    @Test func theSVGDrawsRunsOfModulesInsideTheQuietZone() {
        let svg = qrSVG(width: 3, dark: dark)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 11 11\""))
        #expect(svg.contains("d=\"M4 4h1v1h-1zM6 4h1v1h-1zM5 5h1v1h-1zM6 6h1v1h-1z\""))
    }

    @Test func theTerminalDrawsTwoRowsACharacter() {
        let lines = qrTerminalLines(width: 3, quiet: 1, dark: dark)
        // 5×5 with the quiet zone: rows 0-1, 2-3, 4.
        #expect(lines.count == 3)
        let plain = lines.map {
            $0.replacingOccurrences(of: "\u{1B}[30;107m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
        }
        #expect(plain == [" ▄ ▄ ", "  ▀▄ ", "     "])
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
