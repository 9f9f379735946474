import BellkeysModel

// Reading a Standard MIDI File: the chunks, the tracks, their events and their errors.

/// Reads a Standard MIDI File (also inside a RIFF RMID wrapper).
/// - Parameter file: the name to use in messages.
public func parseMIDIFile(_ bytes: [UInt8], file: String) throws(MIDIFileError) -> MIDIFile {
    var reader = MIDIReader(bytes: bytes, file: file)
    return try reader.read()
}

private struct MIDIReader {
    let bytes: [UInt8]
    let file: String
    var position = 0

    func fail(
        _ message: String, at offset: Int? = nil,
        fix: String = "the file is damaged or incomplete: export or download it again"
    ) -> MIDIFileError {
        MIDIFileError(file: file, offset: offset, message: message, fix: fix)
    }

    func tag(at offset: Int) -> String? {
        guard offset + 4 <= bytes.count else { return nil }
        return String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
    }

    func be(_ offset: Int, _ count: Int) -> Int {
        var v = 0
        for i in 0..<count { v = v << 8 | Int(bytes[offset + i]) }
        return v
    }

    /// The header chunk (after a RIFF MIDI wrapper, if any): where it starts, its length, the
    /// format, the tracks it declares and the division, each checked.
    func readHeader() throws(MIDIFileError) -> (
        start: Int, length: Int, format: Int, declaredTracks: Int, division: MIDIDivision
    ) {
        var start = 0
        if tag(at: 0) == "RIFF", tag(at: 8) == "RMID" {
            // RIFF MIDI: the SMF is the payload of the "data" chunk.
            var offset = 12
            while offset + 8 <= bytes.count, tag(at: offset) != "data" {
                offset +=
                    8
                    + (Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8
                        | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24)
            }
            guard offset + 8 <= bytes.count else { throw fail("RIFF MIDI file without a data chunk") }
            start = offset + 8
        }
        guard tag(at: start) == "MThd" else {
            throw fail(
                bytes.isEmpty
                    ? "the file is empty"
                    : "not a Standard MIDI File: \(FileContent(bytes).description) (a MIDI file starts with \"MThd\")",
                fix: "give a Standard MIDI File, as a sequencer or notation program exports it (File > Export > MIDI)")
        }
        guard start + 14 <= bytes.count else { throw fail("truncated in the header", at: bytes.count) }
        let headerLength = be(start + 4, 4)
        guard headerLength >= 6, start + 8 + headerLength <= bytes.count else {
            throw fail("the header length \(headerLength) is invalid", at: start + 4)
        }
        let format = be(start + 8, 2), declaredTracks = be(start + 10, 2), rawDivision = be(start + 12, 2)
        guard (0...2).contains(format) else {
            throw fail(
                "unknown format \(format) (Standard MIDI Files are format 0, 1 or 2)",
                at: start + 8, fix: "save the song as a format 0 or format 1 MIDI file")
        }
        let division: MIDIDivision
        if rawDivision & 0x8000 != 0 {
            let fps = 256 - (rawDivision >> 8), ticksPerFrame = rawDivision & 0xFF
            guard [24, 25, 29, 30].contains(fps), ticksPerFrame > 0 else {
                throw fail("SMPTE division \(fps) frames/s × \(ticksPerFrame) ticks is invalid", at: start + 12)
            }
            division = .smpte(framesPerSecond: fps, ticksPerFrame: ticksPerFrame)
        } else {
            guard rawDivision > 0 else { throw fail("the division (ticks per quarter note) is 0", at: start + 12) }
            division = .ticksPerQuarter(rawDivision)
        }
        guard declaredTracks > 0 else { throw fail("the header declares no tracks", at: start + 10) }
        if format == 0 && declaredTracks != 1 {
            throw fail("a format 0 file must have one track, this one declares \(declaredTracks)", at: start + 10)
        }
        return (start, headerLength, format, declaredTracks, division)
    }

    mutating func read() throws(MIDIFileError) -> MIDIFile {
        let (start, headerLength, format, declaredTracks, division) = try readHeader()
        var events: [(event: MIDITimedEvent, track: Int, order: Int)] = []
        var tempos: [(tempo: MIDITempo, track: Int, order: Int)] = []
        var endTick = 0
        var warnings: [String] = []
        position = start + 8 + headerLength
        var track = 0
        while track < declaredTracks {
            guard position + 8 <= bytes.count else {
                throw fail(
                    "the header declares \(declaredTracks) tracks but the file ends after \(track)",
                    at: position)
            }
            let chunk = tag(at: position)
            let length = be(position + 4, 4)
            let body = position + 8
            var end = body + length
            // The one damage played round: the last track cut inside (or just before) its
            // End-of-Track event. At most 6 bytes may be missing: a note or a controller (3
            // bytes at least) and an End-of-Track (4 at least) cannot both hide in them, so
            // every note is there. Anything more missing is an error.
            let missing = end - bytes.count
            let cutEnd =
                chunk == "MTrk" && track == declaredTracks - 1 && missing > 0
                && missing <= MIDIReader.mostMissingBytes
            let truncated = fail(
                "\(chunk == "MTrk" ? "track \(track + 1)" : "a chunk") claims \(length) bytes but only \(bytes.count - body) remain (truncated file)",
                at: position + 4)
            guard end <= bytes.count || cutEnd else { throw truncated }
            if cutEnd { end = bytes.count }
            position = end
            guard chunk == "MTrk" else { continue } // unknown chunks are skipped, as the spec says
            let firstEvent = events.count, firstTempo = tempos.count
            let read: (tick: Int, endOfTrack: EndOfTrack)
            do {
                read = try readTrack(
                    from: body, to: end, number: track, missingBytes: cutEnd ? missing : 0,
                    events: &events, tempos: &tempos)
            } catch  where cutEnd {
                // Not an End-of-Track cut short: a problem before the last 6 bytes (the most of a
                // cut End-of-Track that can be there) is reported as itself, one at the cut as
                // the truncation it is.
                if let offset = error.offset, offset < end - (MIDIReader.longestEndOfTrack - 1) { throw error }
                throw truncated
            }
            if cutEnd {
                let short = length - (end - body)
                warnings.append(
                    "\(file): the file is cut short at byte \(end), \(short) byte\(short == 1 ? "" : "s") before the end its last track declares, "
                        + (read.endOfTrack == .present ? "after" : "inside or before")
                        + " that track's End-of-Track event; every note was read and is played")
            } else if read.endOfTrack == .missing {
                warnings.append(
                    "\(file): track \(track + 1) has no End-of-Track event (at byte \(end)); it is played as if it ended after its last event"
                )
            }
            if format == 2 {
                // Independent sequences, one after the other: this one starts where the ones
                // before it ended, at the default tempo until it sets its own.
                let offset = endTick
                for i in firstEvent..<events.count { events[i].event.tick += offset }
                for i in firstTempo..<tempos.count { tempos[i].tempo.tick += offset }
                if track > 0 { tempos.append((MIDITempo(tick: offset, microsecondsPerQuarter: 500_000), track, -1)) }
                endTick = offset + read.tick
            } else {
                endTick = max(endTick, read.tick)
            }
            track += 1
        }
        events.sort { ($0.event.tick, $0.track, $0.order) < ($1.event.tick, $1.track, $1.order) }
        tempos.sort { ($0.tempo.tick, $0.track, $0.order) < ($1.tempo.tick, $1.track, $1.order) }
        let result = MIDIFile(
            format: format, trackCount: declaredTracks, division: division,
            events: events.map(\.event), tempos: tempos.map(\.tempo), endTick: endTick,
            warnings: warnings)
        let seconds = Double(result.frame(atTick: endTick, sampleRate: 1_000)) / 1_000
        if seconds > Double(MIDIFile.maximumSeconds) {
            throw fail(
                "the file lasts \(Int(seconds / 3600)) hours; bellkeys renders at most 24 hours",
                fix: "check the file: such a length usually comes from a corrupt delta time")
        }
        return result
    }

    /// Bytes a cut End-of-Track may lack: fewer than a note (3 bytes with running status) and
    /// an End-of-Track (4 bytes with a 1-byte delta time) together.
    static let mostMissingBytes = 6
    /// The longest End-of-Track event: a 4-byte delta time, FF 2F 00.
    static let longestEndOfTrack = 7

    /// How a track ended.
    enum EndOfTrack { case present, missing, cut }

    /// Reads one MTrk body; returns its last tick and how it ended. `missingBytes`: how many
    /// bytes the file lacks at `end`; if not 0, the bytes may stop inside a final End-of-Track
    /// event that lacks exactly those (any other cut is an error).
    mutating func readTrack(
        from start: Int, to end: Int, number: Int, missingBytes: Int = 0,
        events: inout [(event: MIDITimedEvent, track: Int, order: Int)],
        tempos: inout [(tempo: MIDITempo, track: Int, order: Int)]
    ) throws(MIDIFileError) -> (tick: Int, endOfTrack: EndOfTrack) {
        var p = start
        var tick = 0
        var runningStatus: UInt8 = 0
        var order = 0
        let name = "track \(number + 1)"
        func byte() throws(MIDIFileError) -> UInt8 {
            guard p < end else { throw fail("\(name) ends in the middle of an event (truncated)", at: p) }
            defer { p += 1 }
            return bytes[p]
        }
        func quantity() throws(MIDIFileError) -> Int {
            var value = 0
            for _ in 0..<4 {
                let b = try byte()
                value = value << 7 | Int(b & 0x7F)
                if b & 0x80 == 0 { return value }
            }
            throw fail("\(name) has a variable-length number longer than 4 bytes", at: p)
        }
        while p < end {
            if missingBytes > 0 && isCutEndOfTrack(from: p, to: end, missing: missingBytes) { return (tick, .cut) }
            tick += try quantity()
            guard p < end else { throw fail("\(name) ends after a delta time, inside an event (truncated)", at: p) }
            var status = bytes[p]
            if status & 0x80 != 0 {
                p += 1
            } else {
                guard runningStatus != 0 else {
                    throw fail("\(name) has a data byte where a status byte was expected", at: p)
                }
                status = runningStatus
            }
            switch status {
            case 0xFF:
                let type = try byte()
                let length = try quantity()
                guard p + length <= end else { throw fail("\(name) ends inside a meta event (truncated)", at: p) }
                if type == 0x2F { return (tick, .present) } // end of track
                if type == 0x51 {
                    guard length == 3 else { throw fail("\(name) has a tempo event of length \(length), not 3", at: p) }
                    let tempo = be(p, 3)
                    guard tempo > 0 else { throw fail("\(name) sets a tempo of 0", at: p) }
                    tempos.append((MIDITempo(tick: tick, microsecondsPerQuarter: tempo), number, order))
                }
                p += length
            case 0xF0, 0xF7:
                let length = try quantity()
                guard p + length <= end else {
                    throw fail("\(name) ends inside a system exclusive message (truncated)", at: p)
                }
                p += length
            case 0x80...0xEF:
                runningStatus = status
                let d1 = try byte()
                let kind = status & 0xF0
                let d2: UInt8 = (kind == 0xC0 || kind == 0xD0) ? 0 : try byte()
                guard d1 < 0x80, d2 < 0x80 else {
                    throw fail("\(name) has a status byte where a data byte was expected", at: p - 1)
                }
                events.append((MIDITimedEvent(tick: tick, status: status, data1: d1, data2: d2), number, order))
            default:
                throw fail("\(name) has an invalid status byte 0x\(String(status, radix: 16))", at: p - 1)
            }
            order += 1
        }
        // Cut between two events: what is missing must be a whole End-of-Track (4 bytes at
        // least, a delta time and FF 2F 00), or it held something else.
        if missingBytes > 0 {
            guard missingBytes >= 4 else {
                throw fail(
                    "\(name) ends \(missingBytes) byte\(missingBytes == 1 ? "" : "s") short of its length, too few for its End-of-Track (truncated)",
                    at: end)
            }
            return (tick, .cut)
        }
        return (tick, .missing)
    }

    /// Whether bytes[p..<end] (not empty) and exactly `missing` more can be one End-of-Track
    /// event: part of a delta time and the rest of it with FF 2F 00, or all of the delta time
    /// and a proper prefix of FF 2F 00 that lacks exactly `missing` bytes.
    func isCutEndOfTrack(from p: Int, to end: Int, missing: Int) -> Bool {
        var q = p, deltaBytes = 0
        while q < end, bytes[q] & 0x80 != 0, deltaBytes < 4 {
            q += 1
            deltaBytes += 1
        }
        if q == end {
            // Cut inside the delta time: its last byte (and up to 4 in all) and FF 2F 00 missing.
            return deltaBytes < 4 && (4...(7 - deltaBytes)).contains(missing)
        }
        guard deltaBytes < 4 else { return false }
        q += 1 // the delta's last byte
        let rest = bytes[q..<end]
        return rest.count < 3 && rest.elementsEqual([0xFF, 0x2F, 0x00].prefix(rest.count))
            && missing == 3 - rest.count
    }
}
