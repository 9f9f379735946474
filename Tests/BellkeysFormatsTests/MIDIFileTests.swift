import BellkeysFormats
import Testing

@Suite struct MIDIFileReading {
    func noteOn(_ note: UInt8, _ velocity: UInt8 = 100) -> [UInt8] { [0x90, note, velocity] }

    @Test func formatOneWithTempoChangesGivesExactFrames() throws {
        // 96 ticks per quarter. Tempo track: 120 bpm, then 60 bpm at tick 192, then 90 bpm at 288.
        var tempoTrack: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] // 500000
        tempoTrack += [0x81, 0x40, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40] // +192: 1000000
        tempoTrack += [0x60, 0xFF, 0x51, 0x03, 0x0A, 0x2C, 0x2B] // +96: 666667
        tempoTrack += [0x00, 0xFF, 0x2F, 0x00]
        var notes: [UInt8] = [0x00, 0x90, 60, 100] // tick 0
        notes += [0x60, 62, 100] // tick 96, running status
        notes += [0x81, 0x40, 0x80, 60, 0] // tick 288
        notes += [0x60, 0x90, 64, 90] // tick 384
        notes += [0x00, 0xFF, 0x2F, 0x00]
        let file = header(format: 1, tracks: 2, division: 96) + chunk(tempoTrack) + chunk(notes)
        let midi = try parseMIDIFile(file, file: "t.mid")
        #expect(midi.format == 1)
        #expect(midi.events.map(\.tick) == [0, 96, 288, 384])
        #expect(midi.events[1].status == 0x90 && midi.events[1].data1 == 62)
        let frames = midi.events.map { midi.frame(atTick: $0.tick, sampleRate: 48_000) }
        // 96 ticks at 120 bpm = 0.5 s; to 192: 1.0 s; 192->288 at 60 bpm: +1 s; 288->384 at 666667 µs: +0.666667 s.
        #expect(frames == [0, 24_000, 96_000, 128_000]) // round(2.666667 * 48000) = 128000.016 -> 128000
        #expect(midi.frame(atTick: 1, sampleRate: 44_100) == 230) // 5208.33 µs * 44.1 = 229.69 -> 230
    }

    @Test func formatZeroDefaultTempoAndSMPTE() throws {
        let file =
            header(format: 0, tracks: 1, division: 480) + chunk([0x83, 0x60, 0x90, 60, 100, 0x00, 0xFF, 0x2F, 0x00])
        let midi = try parseMIDIFile(file, file: "t.mid")
        #expect(midi.frame(atTick: midi.events[0].tick, sampleRate: 48_000) == 24_000) // 480 ticks at 120 bpm
        // SMPTE 25 fps × 40 ticks = 1000 ticks per second.
        let smpte =
            header(format: 0, tracks: 1, division: 0xE728) + chunk([0x87, 0x68, 0x90, 60, 100, 0x00, 0xFF, 0x2F, 0x00])
        let s = try parseMIDIFile(smpte, file: "s.mid")
        #expect(s.division == .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        #expect(s.frame(atTick: 1_000, sampleRate: 48_000) == 48_000)
        #expect(s.frame(atTick: s.events[0].tick, sampleRate: 48_000) == 48_000)
    }

    @Test func simultaneousEventsKeepTrackThenFileOrder() throws {
        let a = chunk([0x00, 0x90, 60, 1, 0x00, 0x90, 61, 1, 0x00, 0xFF, 0x2F, 0x00])
        let b = chunk([0x00, 0x90, 62, 1, 0x00, 0xFF, 0x2F, 0x00])
        let midi = try parseMIDIFile(header(format: 1, tracks: 2, division: 96) + a + b, file: "t.mid")
        #expect(midi.events.map(\.data1) == [60, 61, 62])
    }

    @Test func sysexMetaAndUnknownChunksAreSkipped() throws {
        let track = chunk([
            0x00, 0xF0, 0x03, 0x7E, 0x7F, 0xF7, 0x00, 0xFF, 0x03, 0x02, 0x41, 0x42,
            0x00, 0xC0, 0x05, 0x00, 0x90, 60, 100, 0x00, 0xFF, 0x2F, 0x00,
        ])
        let odd = Array("XFIH".utf8) + [0, 0, 0, 2, 1, 2]
        let midi = try parseMIDIFile(header(format: 1, tracks: 1, division: 96) + odd + track, file: "t.mid")
        #expect(midi.events.map(\.status) == [0xC0, 0x90])
    }

    @Test func riffMIDIWrapperIsUnwrapped() throws {
        let smf = makeMIDIFile(ticksPerQuarter: 480, tracks: [[], [(480, noteOn(67))]])
        func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> ($0 * 8)) & 0xFF) } }
        let info: [UInt8] = Array("LIST".utf8) + le32(4) + Array("INFO".utf8)
        let data: [UInt8] = Array("data".utf8) + le32(smf.count) + smf
        let body: [UInt8] = Array("RMID".utf8) + info + data
        let rmid: [UInt8] = Array("RIFF".utf8) + le32(body.count) + body
        let midi = try parseMIDIFile(rmid, file: "song.rmi")
        #expect(midi.events.map(\.data1) == [67])
        #expect(midi.frame(atTick: 480, sampleRate: 48_000) == 24_000)
    }

    @Test func writerAndReaderAgree() throws {
        let bytes = makeMIDIFile(
            ticksPerQuarter: 480, microsecondsPerQuarter: 400_000,
            tracks: [[], [(0, noteOn(60)), (480, [0x80, 60, 0]), (960, noteOn(72))]])
        let midi = try parseMIDIFile(bytes, file: "w.mid")
        #expect(midi.events.map { midi.frame(atTick: $0.tick, sampleRate: 48_000) } == [0, 19_200, 38_400])
    }

    /// Header bytes of a format-`format` file declaring `tracks` tracks.
    static func head(_ format: UInt8, _ tracks: UInt8, _ division: [UInt8] = [0, 96]) -> [UInt8] {
        let magic: [UInt8] = Array("MThd".utf8)
        let fields: [UInt8] = [0, 0, 0, 6, 0, format, 0, tracks]
        return magic + fields + division
    }

    /// A track chunk that claims `declared` bytes and holds `body`.
    static func track(_ declared: UInt8, _ body: [UInt8]) -> [UInt8] {
        let magic: [UInt8] = Array("MTrk".utf8)
        let length: [UInt8] = [0, 0, 0, declared]
        return magic + length + body
    }

    static let corruptFiles: [([UInt8], String)] = [
        ([], "the file is empty"),
        (Array("RIFF1234WAVE".utf8), "not a Standard MIDI File"),
        (head(3, 1), "unknown format 3"),
        (head(1, 2) + track(4, [0, 0xFF, 0x2F, 0]), "declares 2 tracks but the file ends after 1"),
        (head(0, 1) + track(40, [0, 0x90]), "claims 40 bytes but only 2 remain"),
        (head(0, 1) + track(3, [0, 0x90, 60]), "ends in the middle of an event"),
        (head(0, 1) + track(3, [0, 60, 100]), "data byte where a status byte"),
        (head(0, 1) + track(6, [0x81, 0x81, 0x81, 0x81, 0x01, 0]), "longer than 4 bytes"),
        (head(0, 1, [0, 0]), "ticks per quarter note) is 0"),
        (head(0, 1, [0, 1]) + track(7, [0xFF, 0xFF, 0xFF, 0x7F, 0x90, 60, 100]), "bellkeys renders at most 24 hours"),
        (head(0, 1) + track(4, [0, 0x90, 0x90, 60]), "status byte where a data byte"),
    ]

    @Test(arguments: corruptFiles)
    func corruptFilesGiveAClearError(bytes: [UInt8], message: String) {
        do {
            _ = try parseMIDIFile(bytes, file: "bad.mid")
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix("bad.mid: "))
            #expect(error.message.contains(message), "\(error.message)")
            #expect(!error.fix.isEmpty)
        }
    }

    /// Every cut of a valid file is an error, except a cut inside the last track's final
    /// End-of-Track event (here its 4 bytes 00 FF 2F 00): that file plays every note, with a
    /// warning that names the byte.
    @Test func everyTruncationOfAValidFileFailsCleanlyButACutEndOfTrack() throws {
        let bytes = makeMIDIFile(ticksPerQuarter: 480, tracks: [[], [(0, noteOn(60)), (480, [0x80, 60, 0])]])
        let whole = try parseMIDIFile(bytes, file: "ok.mid")
        #expect(whole.events.count == 2 && whole.warnings.isEmpty && whole.endTick == 480)
        #expect(Array(bytes.suffix(4)) == [0, 0xFF, 0x2F, 0])
        for length in 0..<bytes.count {
            let cut = Array(bytes[0..<length])
            if bytes.count - length <= 4 {
                let file = try parseMIDIFile(cut, file: "cut.mid")
                #expect(file.events == whole.events && file.endTick == 480 && file.tempos == whole.tempos)
                #expect(
                    file.warnings == [
                        "cut.mid: the file is cut short at byte \(length), \(bytes.count - length) byte\(bytes.count - length == 1 ? "" : "s") before the end its last track declares, inside or before that track's End-of-Track event; every note was read and is played"
                    ])
            } else {
                #expect(throws: MIDIFileError.self) { try parseMIDIFile(cut, file: "cut.mid") }
            }
        }
    }

    /// A long delta time before the End-of-Track may be cut too, up to 6 bytes missing; more
    /// could hide a note, and is an error; a cut in any track but the last is an error.
    @Test func onlyTheEndOfTrackOfTheLastTrackMayBeCut() throws {
        // A note-on, a running-status note-off 480 ticks later, the End-of-Track 128 ticks
        // after it with its delta written in 4 bytes (allowed, if not minimal).
        let last: [UInt8] = [0, 0x90, 60, 100, 0x83, 0x60, 60, 0, 0x80, 0x80, 0x81, 0x00, 0xFF, 0x2F, 0x00]
        let file = Self.head(1, 1) + Self.track(UInt8(last.count), last)
        #expect(try parseMIDIFile(file, file: "ok.mid").endTick == 480 + 128)
        for cut in 1...6 {
            let parsed = try parseMIDIFile(Array(file.dropLast(cut)), file: "cut.mid")
            #expect(parsed.events.count == 2 && parsed.warnings.count == 1)
        }
        // 7 bytes could be a note-off and an End-of-Track: refused, though here they were not.
        #expect(throws: MIDIFileError.self) { try parseMIDIFile(Array(file.dropLast(7)), file: "cut.mid") }
        #expect(throws: MIDIFileError.self) { try parseMIDIFile(Array(file.dropLast(8)), file: "cut.mid") }
        #expect(throws: MIDIFileError.self) { try parseMIDIFile(Array(file.dropLast(10)), file: "cut.mid") }
        let twoTracks =
            Self.head(1, 2) + Self.track(4, [0, 0xFF, 0x2F, 0])
            + Self.track(UInt8(last.count), last)
        let firstCut = Self.head(1, 2) + Self.track(4, [0, 0xFF, 0x2F]) + Self.track(UInt8(last.count), last)
        #expect(try parseMIDIFile(twoTracks, file: "ok.mid").warnings.isEmpty)
        #expect(throws: MIDIFileError.self) { try parseMIDIFile(firstCut, file: "cut.mid") }
    }

    /// What is missing must be exactly the rest of one End-of-Track: fewer bytes than that
    /// held something else (here a running-status note-on, D4, that would be lost), and a delta
    /// time of more than 4 bytes is no delta time.
    @Test func aCutThatCannotBeAnEndOfTrackIsRefused() throws {
        let body: [UInt8] = [0, 0x90, 60, 100, 0, 62, 100]
        let file = Self.head(0, 1) + Self.track(UInt8(body.count), body)
        #expect(try parseMIDIFile(file, file: "ok.mid").events.count == 2)
        for cut in 1...3 {
            #expect(throws: MIDIFileError.self, "\(cut) bytes cut") {
                try parseMIDIFile(Array(file.dropLast(cut)), file: "cut.mid")
            }
        }
        let longDelta: [UInt8] = [0, 0x90, 60, 100, 0x81, 0x81, 0x81, 0x81, 0x01, 0xFF, 0x2F, 0]
        let long = Self.head(0, 1) + Self.track(UInt8(longDelta.count), longDelta)
        #expect(throws: MIDIFileError.self) { try parseMIDIFile(Array(long.dropLast(4)), file: "cut.mid") }
        // A problem before the cut is reported as itself, at its byte.
        let bad: [UInt8] = [0, 0xF4, 0, 0x90, 60, 100, 0, 0xFF, 0x2F, 0]
        let badFile = Self.head(0, 1) + Self.track(UInt8(bad.count), bad)
        do {
            _ = try parseMIDIFile(Array(badFile.dropLast(2)), file: "bad.mid")
            Issue.record("accepted")
        } catch {
            #expect(error.message == "track 1 has an invalid status byte 0xf4" && error.offset == 23)
        }
    }

    @Test func aTrackWithoutEndOfTrackPlaysWithAWarning() throws {
        let file = Self.head(0, 1) + Self.track(4, [0, 0x90, 60, 100])
        let parsed = try parseMIDIFile(file, file: "open.mid")
        #expect(parsed.events.count == 1)
        #expect(
            parsed.warnings == [
                "open.mid: track 1 has no End-of-Track event (at byte 26); it is played as if it ended after its last event"
            ])
    }

    /// Format 2: each track an independent sequence, played one after the other, each from
    /// 120 beats per minute until it sets its own tempo.
    @Test func formatTwoPlaysItsSequencesOneAfterTheOther() throws {
        let bytes = makeMIDIFile(
            ticksPerQuarter: 96,
            tracks: [
                [(0, [0xFF, 0x51, 3, 0x0F, 0x42, 0x40]), (0, noteOn(60)), (96, noteOn(62)), (192, [0x80, 60, 0])],
                [(0, noteOn(64)), (96, noteOn(65)), (288, [0x80, 64, 0])],
            ], format: 2)
        let file = try parseMIDIFile(bytes, file: "two.mid")
        #expect(file.format == 2 && file.warnings.isEmpty)
        // Sequence 1 at 60 bpm: 0, 1 s, ends 2 s. Sequence 2 at 120 bpm from 2 s: 2, 2.5 s, ends 3.5 s.
        let schedule = file.scheduled(sampleRate: 1_000)
        #expect(schedule.events.map(\.frame) == [0, 1_000, 2_000, 2_000, 2_500, 3_500])
        #expect(schedule.events.map(\.data1) == [60, 62, 60, 64, 65, 64])
        #expect(schedule.endFrame == 3_500)
    }

    func header(format: Int, tracks: Int, division: Int) -> [UInt8] {
        Array("MThd".utf8) + [
            0, 0, 0, 6, 0, UInt8(format), 0, UInt8(tracks), UInt8(division >> 8), UInt8(division & 0xFF),
        ]
    }

    func chunk(_ body: [UInt8]) -> [UInt8] {
        Array("MTrk".utf8) + [0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
    }
}
