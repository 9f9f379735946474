import BellkeysFormats
import BellkeysModel
import Testing

/// What a file given as an instrument is, and a map compiled, without a disk: files in memory.
@Suite struct MapCompile {
    func files(_ texts: [String: String]) -> FileFinder {
        .inMemory(texts.mapValues { Array($0.utf8) })
    }

    func read(_ path: String, _ texts: [String: String], preset: PresetChoice? = nil) throws(InstrumentError)
        -> InstrumentFile
    {
        try readInstrumentFile(path: path, files: files(texts), preset: preset)
    }

    func compiled(_ file: InstrumentFile) throws -> CompiledMap {
        guard case .one(.map(let compiled)) = file else { throw Unexpected(file: file) }
        return compiled
    }

    struct Unexpected: Error { var file: InstrumentFile }

    func problems(_ path: String, _ texts: [String: String], preset: PresetChoice? = nil) -> [String] {
        do {
            _ = try read(path, texts, preset: preset)
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func keysAskForEachFileOnceInKeyOrder() throws {
        let map = try compiled(
            read(
                "/m/map.json",
                [
                    "/m/map.json":
                        #"{"keys": [{"note": 60, "sample": "a.wav"}, {"note": 62, "sample": "sub/b.wav"}, {"note": 64, "sample": "a.wav", "gainDecibels": -6}]}"#
                ]))
        #expect(map.named == nil && map.requestedPreset == nil)
        #expect(map.keyPaths == ["/m/a.wav", "/m/sub/b.wav", "/m/a.wav"])
        #expect(map.samples == [SampleRequest(path: "/m/a.wav"), SampleRequest(path: "/m/sub/b.wav")])
        #expect(map.sampleOfKey == [0, 1, 0] && map.firstKeyOfSample == [0, 1])
        // The keys become regions playing the bank's samples, bells at their own pitch.
        let instrument = map.instrument(bankIndex: [7, 3], base: nil)
        #expect(instrument.bellCount == 3 && instrument.regions.map(\.sampleIndex) == [7, 3, 7])
        #expect(instrument.regions.map(\.keyRange) == [60...60, 62...62, 64...64])
        #expect(instrument.regions[2].gain == linearGain(decibels: -6))
        // A file that fails is reported at the first key naming it.
        #expect(
            map.problem(sample: 1, SampleError(message: "no such file", fix: "check the name")).description
                == "/m/map.json:1:67: keys[1].sample: \"sub/b.wav\" (/m/sub/b.wav): no such file\n    fix: check the name"
        )
    }

    @Test func aFileIsToldByItsNameOrItsContents() throws {
        guard case .one(.named(.sfz(path: "/i/Bells.SFZ"))) = try read("/i/Bells.SFZ", [:]) else {
            Issue.record("an .sfz file")
            return
        }
        let choice = PresetChoice(bank: 0, program: 14)
        guard
            case .one(.named(.soundFont(path: "/f/x.sf3", preset: choice))) = try read("/f/x.sf3", [:], preset: choice)
        else {
            Issue.record("a SoundFont")
            return
        }
        guard
            case .sets(let sets) = try read(
                "/m/sets.json", ["/m/sets.json": #"{"sets": [{"name": "A", "program": 0, "map": "a.sfz"}]}"#])
        else {
            Issue.record("a map of sets")
            return
        }
        #expect(sets.sets.map(\.name) == ["A"])
        #expect(
            problems("/m/tune.json", ["/m/tune.json": "MThd\0\0\0\u{6}\0\0\0\u{1}\0\u{60}"]).first?
                .hasPrefix("/m/tune.json: this is a MIDI file (a tune), not a map") == true)
        #expect(
            problems("/m/none.json", [:]) == [
                "/m/none.json: cannot read the map file: No such file or directory\n    fix: check the path (it is taken relative to the current folder)"
            ])
    }

    @Test func theNamedInstrumentIsFoundBesideTheMapInAnyCase() throws {
        let sfz = try compiled(
            read(
                "/m/map.json",
                ["/m/map.json": #"{"instrument": "Parts/Bells.sfz"}"#, "/m/parts/bells.sfz": ""]))
        #expect(sfz.named == .sfz(path: "/m/parts/bells.sfz") && sfz.samples.isEmpty)
        // The map's bank and program choose the preset, unless --program does.
        let map = ["/m/map.json": #"{"soundfont": "gm.sf2", "program": 14}"#, "/m/gm.sf2": ""]
        #expect(
            try compiled(read("/m/map.json", map)).named
                == .soundFont(path: "/m/gm.sf2", preset: PresetChoice(bank: 0, program: 14)))
        let asked = PresetChoice(bank: 0, program: 9)
        let chosen = try compiled(read("/m/map.json", map, preset: asked))
        #expect(chosen.named == .soundFont(path: "/m/gm.sf2", preset: asked) && chosen.requestedPreset == asked)
        // A font Debian packages names its package.
        #expect(
            problems("/m/map.json", ["/m/map.json": #"{"soundfont": "FluidR3_GM.sf2"}"#]) == [
                "/m/map.json:1:15: soundfont: \"FluidR3_GM.sf2\" (/m/FluidR3_GM.sf2): no such file\n    fix: install the SoundFont: sudo apt install fluid-soundfont-gm (it puts FluidR3_GM.sf2 in /usr/share/sounds)"
            ])
        #expect(
            problems("/m/map.json", ["/m/map.json": #"{"keys": [{"note": 60, "sample": "a.wav"}]}"#], preset: asked)
                == [
                    "/m/map.json: --program 9 (bank 0) chooses a SoundFont's preset, and the map names no SoundFont\n    fix: give a SoundFont as --map, or a map with \"soundfont\"; or leave --program and --bank out"
                ])
    }

    @Test func aSetIsItsOwnFieldsOrTheFileItNamesButNotAMapOfSets() throws {
        let texts = [
            "/m/sets.json":
                #"{"sets": [{"name": "Own", "program": 0, "keys": [{"note": 60, "sample": "a.wav"}]}, {"name": "Font", "program": 1, "map": "GM.sf2", "preset": {"program": 14}}, {"name": "Loop", "program": 2, "map": "other.json"}]}"#,
            "/m/gm.sf2": "", "/m/other.json": #"{"sets": [{"name": "Back", "program": 0, "map": "sets.json"}]}"#,
        ]
        guard case .sets(let map) = try read("/m/sets.json", texts) else {
            Issue.record("a map of sets")
            return
        }
        let finder = files(texts)
        guard case .map(let own) = try readSet(map.sets[0], mapPath: "/m/sets.json", files: finder) else {
            Issue.record("a set of its own fields")
            return
        }
        #expect(own.mapPath == "/m/sets.json" && own.samples == [SampleRequest(path: "/m/a.wav")])
        guard case .named(let font) = try readSet(map.sets[1], mapPath: "/m/sets.json", files: finder) else {
            Issue.record("a set naming a SoundFont")
            return
        }
        #expect(font == .soundFont(path: "/m/gm.sf2", preset: PresetChoice(bank: 0, program: 14)))
        #expect(throws: InstrumentError.self) { try readSet(map.sets[2], mapPath: "/m/sets.json", files: finder) }
        do {
            _ = try readSet(map.sets[2], mapPath: "/m/sets.json", files: finder)
        } catch {
            #expect(error.problems.map(\.message) == ["\"other.json\" is a map of sets itself"])
            #expect(error.problems.first?.path == "sets[2].map")
        }
    }

    @Test func setsRingInAtMostEightRoomsAndEveryDryOneIsOne() throws {
        func sets(_ rooms: [ReverbSettings]) -> [InstrumentSet] {
            rooms.enumerated().map { k, room in
                InstrumentSet(name: "\(k)", program: k, instrument: Instrument(keys: [], reverb: room))
            }
        }
        let eight = (1...7).map { ReverbSettings(preset: .church, mix: Double($0) / 10) } + [.off]
        // Dry settings (no preset, or a preset at no mix) are the one dry room.
        let dry = [ReverbSettings(preset: .hall, mix: 0), ReverbSettings(preset: .off, mix: 0.5)]
        #expect(tooManyRooms(sets(eight + dry + [eight[0]]), mapPath: "/m/sets.json") == nil)
        #expect(
            tooManyRooms(sets(eight + [ReverbSettings(preset: .room)]), mapPath: "/m/sets.json")?.description
                == "/m/sets.json: sets: the sets ring in 9 different rooms (reverb and reverbMix), more than the 8 bellkeys holds at once\n    fix: let some sets share a room: give them the same reverb and reverbMix"
        )
    }

    @Test func aSetPlaysAtTheMapsMasterVolumeAddedToItsOwn() throws {
        guard
            case .sets(let map) = try read(
                "/m/sets.json",
                [
                    "/m/sets.json":
                        #"{"masterVolumeDecibels": -6, "sets": [{"name": "A", "program": 3, "bank": 2, "channels": [10], "map": "a.sfz"}]}"#
                ])
        else {
            Issue.record("a map of sets")
            return
        }
        let set = InstrumentSet(
            map.sets[0], of: map, playing: Instrument(keys: [], masterVolumeDecibels: -3), preset: "0:14 Tubular Bells")
        #expect(set.name == "A" && set.program == 3 && set.bank == 2 && set.channels == [9])
        #expect(set.instrument.masterVolumeDecibels == -9 && set.preset == "0:14 Tubular Bells")
    }

    @Test func keysComeFirstAndTheNamedInstrumentKeepsItsSwitchesAndControllers() throws {
        let map = try compiled(
            read(
                "/m/map.json",
                [
                    "/m/map.json": #"{"instrument": "b.sfz", "keys": [{"note": 84, "sample": "a.wav", "pan": 0.5}]}"#,
                    "/m/b.sfz": "",
                ]))
        var region = Region(sampleIndex: 0)
        region.keyRange = 48...72
        var base = Instrument(regions: [region])
        base.keyswitchRange = 24...26
        base.defaultKeyswitch = 25
        base.controllerDefaults = [1: 64]
        base.restrikeReleases = true
        base.chokesWithinChannel = true
        base.pitchBendReach = 127.0 / 128
        let instrument = map.instrument(bankIndex: [3], base: base)
        #expect(instrument.bellCount == 1 && instrument.regions.map(\.keyRange) == [84...84, 48...72])
        #expect(instrument.regions.map(\.sampleIndex) == [3, 0])
        #expect(instrument.keyswitchRange == 24...26 && instrument.defaultKeyswitch == 25)
        #expect(
            instrument.controllerDefaults == [1: 64] && instrument.restrikeReleases && instrument.chokesWithinChannel)
        #expect(instrument.pitchBendReach == 127.0 / 128)
        // A panned key follows CC10; so does an instrument that does.
        #expect(instrument.followsPanController)
        #expect(map.instrument(bankIndex: [3], base: nil).keyswitchRange == nil)
    }
}
