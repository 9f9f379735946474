import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysSystem
import EngineTestSupport
import Foundation
import Testing

/// A folder with two constant samples (levels 3/8 and 3/32, exact in 16 bits) and a map of
/// one instrument around the second.
private func setFolder() throws -> String {
    let folder = temporaryFolder()
    try writeWAV([Float](repeating: 0.375, count: 4_800), to: folder + "/a.wav")
    try writeWAV([Float](repeating: 0.093_75, count: 4_800), to: folder + "/b.wav")
    write(#"{"noteOff": "damp", "keys": [{"note": 60, "sample": "b.wav"}]}"#, to: folder + "/b.json")
    return folder
}

private func loadProblems(_ map: String, in folder: String) -> [InstrumentProblem] {
    write(map, to: folder + "/sets.json")
    do {
        _ = try loadInstrument(path: folder + "/sets.json")
        return []
    } catch {
        return error.problems
    }
}

@Suite struct SetMaps {
    /// Two sets, one with its own keys and one from a map file, load into one bank; a program
    /// change on the wire plays the other set at its frame, channel 2 starts on the second.
    @Test func setsLoadIntoOneBankAndSwitch() throws {
        let folder = try setFolder()
        write(
            """
            {"sets": [
              {"name": "A", "program": 3, "keys": [{"note": 60, "sample": "a.wav"}]},
              {"name": "B", "program": 4, "bank": 1, "channels": [2], "map": "b.json"}
            ]}
            """, to: folder + "/sets.json")
        let loaded = try loadInstrument(path: folder + "/sets.json")
        #expect(loaded.sets.map(\.name) == ["A", "B"] && loaded.bank.count == 2)
        #expect(loaded.sets[1].instrument.bells[0].sampleIndex == 1)
        let sets = loaded.instrumentSets
        #expect(sets.followsProgramChange && sets.startingSets[1] == 1 && sets.startingSets[0] == 0)
        var config = EngineConfiguration(sampleRate: loaded.sampleRate)
        config.limiterThreshold = 1
        let engine = Engine(bank: loaded.bank, sets: sets, configuration: config)
        for channel in 0..<2 { engine.enqueue(.control(frame: 0, channel: channel, controller: 7, value: 127)) }
        engine.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        engine.enqueue(.control(frame: 10, controller: 0, value: 0))
        engine.enqueue(.control(frame: 10, controller: 32, value: 1))
        engine.enqueue(.programChange(frame: 100, program: 4))
        engine.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        engine.enqueue(.noteOn(frame: 200, channel: 1, note: 60, velocity: 127))
        let out = render(engine, 300)
        #expect(out[0..<100].allSatisfy { $0 == 0.375 })
        #expect(out[100..<200].allSatisfy { $0 == 0.375 + 0.093_75 })
        #expect(out[200..<300].allSatisfy { $0 == 0.375 + 0.093_75 + 0.093_75 })
        // --set B: every channel starts on B.
        var chosen = loaded
        chosen.startingSet = 1
        #expect(chosen.instrumentSets.startingSets == [Int](repeating: 1, count: 16))
    }

    /// Sets of keys load into the one bank, each file once: a later set's keys take the sample
    /// an earlier set loaded (not decoded again), and the bank's lists stay in step with it.
    @Test func setsOfKeysShareTheirFiles() throws {
        let folder = try setFolder()
        write(
            """
            {"sets": [
              {"name": "A", "program": 0, "keys": [{"note": 60, "sample": "a.wav"}, {"note": 62, "sample": "b.wav"}]},
              {"name": "B", "program": 1, "keys": [{"note": 60, "sample": "b.wav"}, {"note": 64, "sample": "a.wav"}]},
              {"name": "C", "program": 2, "map": "b.json"}
            ]}
            """, to: folder + "/sets.json")
        let loaded = try loadInstrument(path: folder + "/sets.json")
        #expect(
            loaded.bank.count == 2 && loaded.samplePaths.map { $0.split(separator: "/").last! } == ["a.wav", "b.wav"])
        #expect(loaded.fileSampleRates.count == 2 && loaded.fadedEnds.count == 2)
        #expect(loaded.sets.map { $0.instrument.bells.map(\.sampleIndex) } == [[0, 1], [1, 0], [1]])
        var config = EngineConfiguration(sampleRate: loaded.sampleRate)
        config.limiterThreshold = 1
        let engine = Engine(bank: loaded.bank, sets: loaded.instrumentSets, configuration: config)
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        engine.enqueue(.programChange(frame: 0, program: 1))
        engine.enqueue(.noteOn(frame: 0, note: 64, velocity: 127))
        #expect(render(engine, 100).allSatisfy { $0 == 0.375 })
    }

    /// A set's problems name the set's place in the file, the field, and the fix; every
    /// set's problems come together.
    @Test func problemsNameTheSet() throws {
        let folder = try setFolder()
        var found = loadProblems(
            """
            {"sets": [
              {"name": "A", "program": 3, "keys": [{"note": 60, "sample": "missing.wav"}]},
              {"name": "B", "program": 3, "map": "b.json"},
              {"name": "a", "program": 5, "map": "b.json"},
              {"program": 6, "map": "nowhere.json"},
              {"name": "D", "program": 8, "channels": [3, 3], "map": "b.json"},
              {"name": "C", "program": 7, "comment": "allowed", "keys": [{"note": 60, "sample": "a.wav", "gian": 1}], "polyphony": 3}
            ]}
            """, in: folder)
        #expect(
            found.map(\.path) == [
                "sets[1].program", "sets[2].name", "sets[3].name", "sets[4].channels", "sets[5].polyphony",
                "sets[5].keys[0].gian",
            ])
        #expect(found[0].message.contains("program 3 already chooses sets[0] (A)"))
        #expect(found[3].message == "channel 3 is listed twice")
        #expect(found[5].fix.contains("did you mean \"gainDecibels\""))
        // Once the map itself is right, the files: a missing sample, a missing map.
        found = loadProblems(
            """
            {"sets": [
              {"name": "A", "program": 3, "keys": [{"note": 60, "sample": "missing.wav"}]},
              {"name": "B", "program": 4, "map": "nowhere.json"}
            ]}
            """, in: folder)
        #expect(found.map(\.path) == ["sets[0].keys[0].sample", "sets[1].map"])
        #expect(found[1].message.contains("no such file"))
        // Sets naming one SoundFont that is not there: one problem, its fix said once, naming
        // the other sets.
        found = loadProblems(
            """
            {"sets": [
              {"name": "A", "program": 8, "soundfont": "gone/FluidR3_GM.sf2"},
              {"name": "B", "program": 9, "soundfont": "gone/FluidR3_GM.sf2"},
              {"name": "C", "program": 10, "soundfont": "gone/FluidR3_GM.sf2"},
              {"name": "D", "program": 11, "keys": [{"note": 60, "sample": "missing.wav"}]}
            ]}
            """, in: folder)
        #expect(found.map(\.path) == ["sets[0].soundfont", "sets[3].keys[0].sample"])
        #expect(
            found[0].message.hasSuffix(
                "no such file; the same in sets[1].soundfont (line 3), sets[2].soundfont (line 4)"),
            "\(found[0].message)")
        #expect(found[0].fix.contains("sudo apt install fluid-soundfont-gm"))
        // A set's map may not be a map of sets.
        write(#"{"sets": [{"name": "X", "program": 0, "map": "b.json"}]}"#, to: folder + "/inner.json")
        found = loadProblems(#"{"sets": [{"name": "A", "program": 0, "map": "inner.json"}]}"#, in: folder)
        #expect(found.map(\.path) == ["sets[0].map"] && found[0].message.contains("a map of sets itself"))
        // Nor may it name itself (it would load for ever).
        found = loadProblems(#"{"sets": [{"name": "A", "program": 0, "map": "sets.json"}]}"#, in: folder)
        #expect(found.map(\.path) == ["sets[0].map"] && found[0].message.contains("a map of sets itself"))
        // A map of sets gives no instrument of its own.
        found = loadProblems(#"{"keys": [], "sets": [{"name": "A", "program": 0, "map": "b.json"}]}"#, in: folder)
        #expect(found.map(\.path) == ["keys"])
    }

    /// The bundled map of sets: the bells as handbells, tower bells and plain, each the map it
    /// names played on its own.
    @Test func bundledSetsLoad() throws {
        let loaded = try loadInstrument(path: samplesFolder + "/examples/bell-sets.json")
        #expect(loaded.sets.map(\.name) == ["Handbells", "Tower", "Plain"])
        #expect(loaded.sets.map(\.program) == [0, 1, 2])
        let tower = try loadInstrument(path: samplesFolder + "/examples/tower-ring.json")
        #expect(loaded.sets[1].instrument.reverb == tower.instrument.reverb)
        #expect(loaded.sets[1].instrument.bellCount == tower.instrument.bellCount)
        // Its range is its first set's (the handbells, C4..C5): the piano and the status line
        // read it. (Until the keys became regions it had none: its top level names no keys.)
        #expect(loaded.playableRange == 60...72 && loaded.contentsText.hasPrefix("3 sets (0 Handbells"))
    }
}
