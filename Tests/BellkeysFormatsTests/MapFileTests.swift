import BellkeysFormats
import BellkeysModel
import Testing

@Suite struct MapFileParsing {
    func parse(_ text: String) throws(InstrumentError) -> MapFile {
        try parseMapFile(Array(text.utf8), file: "tags.json")
    }

    /// The first problem of a map that must fail.
    func problem(_ text: String) -> InstrumentProblem? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error.problems.first
        }
    }

    @Test func fullExampleResolves() throws {
        let map = try parse(
            """
            {
              "comment": "a bell map",
              "masterVolumeDecibels": -3,
              "velocityCurve": "linear",
              "polyphony": 64,
              "unmappedNotes": "fold",
              "noteOff": "damp",
              "releaseSeconds": 0.2,
              "keys": [
                { "tag": 100, "sample": "c4.wav" },
                { "note": "C#4", "sample": "cs4.wav", "gainDecibels": -2.5, "noteOff": "ring" },
                { "note": "Db5", "sample": "db5.wav", "releaseSeconds": 1, "chokeGroup": 2 },
                { "note": 72, "sample": "c5.wav", "comment": "top" }
              ]
            }
            """)
        #expect(map.masterVolumeDecibels == -3)
        #expect(map.velocityCurve == .linear)
        #expect(map.polyphony == 64)
        #expect(map.unmappedNotes == .fold)
        #expect(map.keys.map(\.note) == [60, 61, 73, 72])
        #expect(map.keys[0].tag == 100)
        #expect(map.keys[0].noteOff == .damp(releaseSeconds: 0.2))
        #expect(map.keys[1].noteOff == .ring)
        #expect(map.keys[1].gainDecibels == -2.5)
        #expect(map.keys[2].noteOff == .damp(releaseSeconds: 1))
        #expect(map.keys[2].chokeGroup == 2)
        #expect((map.keys[3].sampleLine, map.keys[3].sampleColumn) == (13, 29))
    }

    @Test func defaultsWhenTheMapSaysNothing() throws {
        let map = try parse(#"{"keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(map.masterVolumeDecibels == 0)
        #expect(map.velocityCurve == .square)
        #expect(map.polyphony == 128)
        #expect(map.unmappedNotes == .ignore)
        #expect(map.keys[0].noteOff == .ring)
    }

    /// `pan` per key, -1 to 1, through the pan law into the instrument's gains; no pan and
    /// pan 0 are the same (exactly 1 and 1).
    @Test func panPlacesAKeyAndZeroIsTheCentre() throws {
        let map = try parse(
            #"{"keys": [{"note": "C4", "sample": "a.wav", "pan": -0.6}, {"note": "D4", "sample": "b.wav", "pan": 0}, {"note": "E4", "sample": "c.wav"}, {"note": "F4", "sample": "d.wav", "pan": 1}]}"#
        )
        #expect(map.keys.map(\.pan) == [-0.6, 0, 0, 1])
        let bells = map.instrument(sampleIndexForKey: [0, 1, 2, 3]).bells.map { $0.sideGains! }
        #expect((bells[0].x, bells[0].y) == panGains(-0.6))
        #expect(bells[0].x > bells[0].y)
        #expect(bells[1] == SIMD2(1, 1) && bells[2] == SIMD2(1, 1))
        #expect(bells[3].x == 0)
        let wide = problem(#"{"keys": [{"note": "C4", "sample": "a.wav", "pan": 1.5}]}"#)
        #expect(wide?.path == "keys[0].pan" && wide?.message == "1.5 is out of range")
        #expect(wide?.fix == "use a number from -1 to 1")
        let word = problem(#"{"keys": [{"note": "C4", "sample": "a.wav", "pan": "left"}]}"#)
        #expect(word?.message == "\"left\" is a string, not a number")
    }

    @Test func reverbNamesARoomAndItsMix() throws {
        let map = try parse(#"{"reverb": "church", "reverbMix": 0.45, "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(map.reverb == ReverbSettings(preset: .church, mix: 0.45))
        #expect(map.instrument(sampleIndexForKey: [0]).reverb == ReverbSettings(preset: .church, mix: 0.45))
        #expect(try parse(#"{"keys": [{"note": "C4", "sample": "a.wav"}]}"#).reverb.preset == .off)
        let cave = problem(#"{"reverb": "cave", "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(cave?.path == "reverb")
        #expect(cave?.fix.contains("church") == true, "\(cave?.fix ?? "")")
        let bright = try parse(#"{"velocityTimbre": 0.8, "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(bright.velocityTimbre == 0.8 && bright.instrument(sampleIndexForKey: [0]).velocityTimbre == 0.8)
        #expect(
            problem(#"{"velocityTimbre": true, "keys": [{"note": "C4", "sample": "a.wav"}]}"#)?.path == "velocityTimbre"
        )
        let bending = try parse(#"{"pitchBend": true, "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(bending.instrument(sampleIndexForKey: [0]).followsPitchBend)
        #expect(
            try !parse(#"{"keys": [{"note": "C4", "sample": "a.wav"}]}"#).instrument(sampleIndexForKey: [0])
                .followsPitchBend)
        let yes = problem(#"{"pitchBend": "yes", "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(yes?.path == "pitchBend" && yes?.fix == "write true or false, without quotes")
        let named = try parse(#"{"instrument": "bells/Tubular Bells.sfz", "quality": "fast"}"#)
        #expect(named.instrument == "bells/Tubular Bells.sfz" && named.quality == .fast && named.keys.isEmpty)
        #expect(named.pitchBend) // on for an instrument unless the map says otherwise
        #expect(problem(#"{"instrument": "bells.json"}"#)?.path == "instrument")
        #expect(problem(#"{"instrument": "a.sfz", "quality": "ultra"}"#)?.path == "quality")
        let timbre = problem(#"{"instrument": "a.sfz", "velocityTimbre": 0.5}"#)
        #expect(timbre?.path == "velocityTimbre" && timbre?.fix.contains("fil_veltrack") == true)
        let loud = problem(#"{"reverb": "hall", "reverbMix": 2, "keys": [{"note": "C4", "sample": "a.wav"}]}"#)
        #expect(loud?.path == "reverbMix" && loud?.fix == "use a number from 0 to 1")
    }

    @Test func noteNamesAndTags() {
        #expect(midiNote(named: "C4") == 60)
        #expect(midiNote(named: "c#4") == 61)
        #expect(midiNote(named: "Db4") == 61)
        #expect(midiNote(named: "F♯3") == 54)
        #expect(midiNote(named: "B#3") == 60)
        #expect(midiNote(named: "C-1") == 0)
        #expect(midiNote(named: "G9") == 127)
        #expect(midiNote(named: "G#9") == nil)
        #expect(midiNote(named: "H4") == nil)
        #expect(midiNote(named: "C") == nil)
        #expect((100...112).map { midiNote(tag: $0)! } == Array(60...72))
        #expect(midiNote(tag: 113) == nil)
        #expect(noteName(61) == "C#4")
        #expect(noteName(0) == "C-1")
    }

    @Test func unknownFieldNamesTheFieldAndSuggestsTheFix() throws {
        let p = try #require(
            problem(
                """
                {"keys": [{"note": "C4", "sample": "a.wav", "relaseSeconds": 0.3}]}
                """))
        #expect(p.path == "keys[0].relaseSeconds")
        #expect(p.message.contains("unknown field \"relaseSeconds\""))
        #expect(p.fix.contains("did you mean \"releaseSeconds\"?"))
        #expect((p.line, p.column) == (1, 62))
        #expect(p.description.hasPrefix("tags.json:1:62: keys[0].relaseSeconds: unknown field"))
    }

    @Test func unknownNoteName() throws {
        let p = try #require(problem(#"{"keys": [{"note": "H4", "sample": "a.wav"}]}"#))
        #expect(p.path == "keys[0].note")
        #expect(p.message.contains("\"H4\" is not a note name"))
        #expect(p.fix.contains("C#4"))
    }

    @Test func duplicateKeyNamesBothEntries() throws {
        let p = try #require(
            problem(#"{"keys": [{"tag": 100, "sample": "a.wav"}, {"note": "B#3", "sample": "b.wav"}]}"#))
        #expect(p.path == "keys[1]")
        #expect(p.message.contains("C4 (MIDI 60) is already mapped by keys[0]"))
    }

    @Test(arguments: [
        (
            #"{"masterVolumeDecibels": "loud", "keys": [{"note": 60, "sample": "a"}]}"#, "masterVolumeDecibels",
            "\"loud\" is a string, not a number"
        ),
        (
            #"{"masterVolumeDecibels": 40, "keys": [{"note": 60, "sample": "a"}]}"#, "masterVolumeDecibels",
            "40 is out of range"
        ),
        (
            #"{"polyphony": 0, "keys": [{"note": 60, "sample": "a"}]}"#, "polyphony",
            "0 is not a whole number from 1 to 65536"
        ),
        (#"{"polyphony": 2.5, "keys": [{"note": 60, "sample": "a"}]}"#, "polyphony", "2.5 is not a whole number"),
        (
            #"{"keys": [{"note": 60, "sample": "a", "releaseSeconds": -1}]}"#, "keys[0].releaseSeconds",
            "-1 is out of range"
        ),
        (
            #"{"releaseSeconds": 0.001, "keys": [{"note": 60, "sample": "a"}]}"#, "releaseSeconds",
            "0.001 is out of range"
        ),
        (#"{"keys": [{"note": 128, "sample": "a"}]}"#, "keys[0].note", "128 is not a MIDI note number"),
        (#"{"keys": [{"tag": 99, "sample": "a"}]}"#, "keys[0].tag", "99 is not a tutorial button tag"),
        // Found by fuzzing: a tag beyond Int's range trapped in the conversion.
        (
            #"{"keys": [{"tag": 113666666666666666666666666, "sample": "a"}]}"#, "keys[0].tag",
            "is not a tutorial button tag"
        ),
        (#"{"keys": [{"tag": 1e999, "sample": "a"}]}"#, "", "not valid JSON: number 1e999 is out of range"),
        (
            #"{"keys": [{"note": 60, "sample": "a", "chokeGroup": -2}]}"#, "keys[0].chokeGroup",
            "-2 is not a whole number"
        ),
        (#"{"velocityCurve": "log", "keys": [{"note": 60, "sample": "a"}]}"#, "velocityCurve", "\"log\" is not one of"),
        (
            #"{"keys": [{"note": 60, "sample": "a", "noteOff": "stop"}]}"#, "keys[0].noteOff",
            "\"stop\" is not \"ring\" or \"damp\""
        ),
        (#"{"keys": [{"note": 60}]}"#, "keys[0].sample", "has no \"sample\""),
        (#"{"keys": [{"note": 60, "sample": ""}]}"#, "keys[0].sample", "\"\" is not a file name"),
        (#"{"keys": [{"sample": "a"}]}"#, "keys[0]", "neither \"note\" nor \"tag\""),
        (#"{"keys": [{"note": 60, "tag": 100, "sample": "a"}]}"#, "keys[0].tag", "both \"note\" and \"tag\""),
        (#"{"keys": []}"#, "keys", "is empty"),
        (#"{"keys": {}}"#, "keys", "not an array"),
        (#"{}"#, "keys", "no \"keys\" array"),
        (#"[1]"#, "", "not an object"),
        (#"{"keys": [{"note": 60, "sample": "a"},]}"#, "", "not valid JSON: trailing comma"),
    ])
    func badValuesNameThePathAndTheValue(text: String, path: String, message: String) throws {
        let p = try #require(problem(text), "accepted: \(text)")
        #expect(p.path == path)
        #expect(p.message.contains(message), "\(p.message)")
        #expect(!p.fix.isEmpty)
        #expect(p.line != nil)
    }

    @Test func everyProblemIsReportedNotJustTheFirst() {
        do {
            _ = try parse(#"{"polyphony": -1, "keys": [{"note": "X", "sample": "a"}, {"tag": 1, "sample": "b"}]}"#)
            Issue.record("accepted")
        } catch {
            #expect(error.problems.map(\.path) == ["polyphony", "keys[0].note", "keys[1].tag"])
        }
    }

    @Test func instrumentFromTheDefaults() {
        // A map's keys become the engine's instrument with gains in linear units.
        #expect(abs(linearGain(decibels: -6.020_599_913) - 0.5) < 1e-6)
        #expect(abs(linearGain(decibels: 12) - 3.981_071_7) < 1e-5)
        #expect(linearGain(decibels: 0) == 1)
    }
}
