import BellkeysEngine
import BellkeysFormats
import BellkeysModel
import EngineTestSupport
import Foundation
import FuzzChecks
import Testing

@testable import BellkeysLoading

/// A font of a 1 kHz sine (48 kHz, root key 60) played by four presets: 0:0 Sine, 0:2 Soft
/// (the same sample 6 dB down), 8:0 Sine Up (two semitones up) and the kit 128:0 (an octave
/// up); 0:1 Pair plays a stereo pair of it; 0:3 Organ plays a sample in the synthesizer's ROM;
/// and a second 0:0 comes last.
private func writeWholeFont(_ path: String) throws {
    let sine = (0..<480).map { Int16((32_767 * 0.3 * sin(2 * Double.pi * 10 * Double($0) / 480)).rounded()) }
    let builder = SoundFontBuilder(
        samples: [
            .init(name: "sine", frames: sine, loop: 0..<480),
            .init(name: "left", frames: sine, loop: 0..<480, type: 4, link: 2),
            .init(name: "right", frames: sine, loop: 0..<480, type: 2, link: 1),
            .init(name: "rom", frames: sine, loop: 0..<480, type: 0x8001),
        ],
        instruments: [
            .init(name: "sine", zones: [.init([(.sampleModes, 1)], target: 0)]),
            .init(
                name: "pair",
                zones: [
                    .init([(.sampleModes, 1), (.pan, -500)], target: 1),
                    .init([(.sampleModes, 1), (.pan, 500)], target: 2),
                ]),
            .init(name: "rom", zones: [.init([(.sampleModes, 1)], target: 3)]),
        ],
        presets: [
            .init(name: "Sine", program: 0, zones: [.init(target: 0)]),
            .init(name: "Pair", program: 1, zones: [.init(target: 1)]),
            .init(name: "Soft", program: 2, zones: [.init([(.initialAttenuation, 60)], target: 0)]),
            .init(name: "Organ", program: 3, zones: [.init(target: 2)]),
            .init(name: "Sine Up", bank: 8, program: 0, zones: [.init([(.coarseTune, 2)], target: 0)]),
            .init(name: "Kit", bank: 128, program: 0, zones: [.init([(.coarseTune, 12)], target: 0)]),
            .init(name: "Second", program: 0, zones: [.init(target: 1)]),
        ])
    try Data(builder.bytes()).write(to: URL(fileURLWithPath: path))
}

/// Key 60 struck on `channel` after `events`, through `loaded` (its sets, or its instrument).
private func strike(_ loaded: LoadedInstrument, channel: Int, after events: [EngineEvent] = []) -> [Float] {
    var config = EngineConfiguration(sampleRate: loaded.sampleRate)
    config.limiterThreshold = 100
    let engine = Engine(bank: loaded.bank, sets: loaded.instrumentSets, configuration: config)
    for event in events { engine.enqueue(event) }
    engine.enqueue(.noteOn(frame: 10, channel: channel, note: 60, velocity: 127))
    let (left, right) = renderStereo(engine, 9_600)
    return left + right
}

/// The pitch of key 60 struck on `channel` after `events`, through the whole font `loaded`.
private func pitch(_ loaded: LoadedInstrument, channel: Int, after events: [EngineEvent] = []) -> Double {
    measuredFrequency(Array(strike(loaded, channel: channel, after: events)[..<9_600]), 2_400..<9_600)
}

@Suite struct WholeFontLoading {
    /// `--map FONT` with no preset plays every preset as a set, each sample stored once (the
    /// sine that four presets play, the pair once), at the rate most samples have; the ROM
    /// preset and the second 0:0 are left out, the ROM one said.
    @Test func everyPresetIsASetAndEverySampleIsStoredOnce() throws {
        let path = temporaryFolder() + "/font.sf2"
        try writeWholeFont(path)
        let loaded = try loadInstrument(path: path)
        #expect(loaded.wholeFont && loaded.sampleRate == 48_000)
        #expect(loaded.sets.map(\.preset) == ["0:0 Sine", "0:1 Pair", "0:2 Soft", "8:0 Sine Up", "128:0 Kit"])
        #expect(loaded.sets.map(\.bank) == [0, 0, 0, 8, 128] && loaded.sets.map(\.program) == [0, 1, 2, 0, 0])
        #expect(loaded.bank.count == 2 && loaded.bank.channelCounts == [1, 2])
        #expect(loaded.instrumentSets.programSelection == .soundFont)
        #expect(
            loaded.instrumentSets.startingSets == [Int](repeating: 0, count: 9) + [4] + [Int](repeating: 0, count: 6))
        #expect(loaded.presetWarnings.contains { $0.hasPrefix(path + ": preset 0:3 Organ is left out: ") })
        #expect(
            loaded.warnings == [
                "\(path): 1 preset cannot be played and is left out (bellkeys check --map \(path) lists what)"
            ])
    }

    /// Channel 1 plays 0:0, channel 10 the kit an octave up; CC0 8 and program 0 choose 8:0,
    /// two semitones up; each within a cent.
    @Test func programChangesAndChannelTenChooseThePresets() throws {
        let path = temporaryFolder() + "/font.sf2"
        try writeWholeFont(path)
        let loaded = try loadInstrument(path: path)
        #expect(abs(cents(pitch(loaded, channel: 0), 1_000)) < 1)
        #expect(abs(cents(pitch(loaded, channel: 9), 2_000)) < 1)
        let up = pitch(
            loaded, channel: 3,
            after: [
                .control(frame: 0, channel: 3, controller: 0, value: 8),
                .programChange(frame: 0, channel: 3, program: 0),
            ])
        #expect(abs(cents(up, 1_000 * pow(2, 2.0 / 12))) < 1)
    }

    /// A preset of the whole font plays the same samples, to the bit, as that preset loaded
    /// alone: 0:1's stereo pair after a program change, the kit on channel 10.
    @Test func aPresetOfTheWholeFontIsThatPresetAlone() throws {
        let path = temporaryFolder() + "/font.sf2"
        try writeWholeFont(path)
        let whole = try loadInstrument(path: path)
        let pair = try loadInstrument(path: path, preset: PresetChoice(bank: 0, program: 1))
        let kit = try loadInstrument(path: path, preset: PresetChoice(bank: 128, program: 0))
        #expect(
            strike(whole, channel: 2, after: [.programChange(frame: 0, channel: 2, program: 1)])
                == strike(pair, channel: 2))
        #expect(strike(whole, channel: 9) == strike(kit, channel: 9))
    }

    /// Choosing presets live (`p`, the teacher's page): a bank select of CC0 alone, and the next
    /// preset a channel can reach (the kits only on channel 10, and only there).
    @Test func presetsChosenLiveAreOnesTheChannelReaches() throws {
        let path = temporaryFolder() + "/font.sf2"
        try writeWholeFont(path)
        let loaded = try loadInstrument(path: path)
        #expect(loaded.bankChoosing(set: 3) == 8 << 7 && loaded.bankChoosing(set: 4) == 128 << 7)
        #expect(loaded.nextSet(after: 2, channel: 0) == 3 && loaded.nextSet(after: 3, channel: 0) == 0)
        #expect(loaded.nextSet(after: 0, channel: 9) == 4 && loaded.nextSet(after: 4, channel: 9) == 4)
    }

    /// A map naming the font with no preset plays the whole font, each preset at the map's
    /// volume; with keys beside it, it is refused with the fix.
    @Test func aMapWithNoPresetPlaysTheWholeFont() throws {
        let folder = temporaryFolder()
        try writeWholeFont(folder + "/font.sf2")
        write(#"{"soundfont": "font.sf2", "masterVolumeDecibels": -6}"#, to: folder + "/map.json")
        let loaded = try loadInstrument(path: folder + "/map.json")
        #expect(loaded.wholeFont && loaded.sets.count == 5 && loaded.path == folder + "/map.json")
        #expect(loaded.sets.allSatisfy { $0.instrument.masterVolumeDecibels == -6 })
        write(
            #"{"soundfont": "font.sf2", "keys": [{"note": 60, "sample": "x.wav"}]}"#, to: folder + "/keys.json")
        #expect {
            try loadInstrument(path: folder + "/keys.json")
        } throws: { error in
            let text = (error as? InstrumentError)?.description ?? ""
            return text.contains("the map plays keys beside the whole font")
                && text.contains("give \"program\" (and \"bank\") to play one preset beside the keys")
        }
    }
}

@Suite struct LoadingSideBySide {
    /// Values made on two threads, each taking its own time, are taken in their order; two
    /// jobs side by side both come back.
    @Test func valuesMadeOnTwoThreadsAreTakenInOrder() {
        var taken: [Int] = []
        inOrder(
            count: 300, threads: 2,
            make: { i in
                usleep(UInt32((i * 7_919) % 13) * 50)
                return i * i
            }
        ) { i, value in
            #expect(value == i * i)
            taken.append(i)
        }
        #expect(taken == Array(0..<300))
        let (a, b) = sideBySide({ (0..<1_000).reduce(0, +) }, { "done" })
        #expect(a == 499_500 && b == "done")
    }

    /// A sample prepared outside the bank lands in it as written, and one whose filling fails
    /// adds nothing.
    @Test func aPreparedSampleIsAdoptedWhole() throws {
        let bank = SampleBank(sampleRate: 48_000)
        let prepared = PreparedSample(frameCount: 3, channels: 2, scale: 1.0 / 32_768) { buffer in
            for i in 0..<6 { buffer[i] = Int16(1_000 * (i + 1)) }
        }
        #expect(bank.adopt(prepared) == 0)
        #expect(bank.frameCount(of: 0) == 3 && bank.channelCounts == [2])
        #expect(bank.value(sample: 0, frame: 2, channel: 1) == 6_000.0 / 32_768)
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            _ = try bank.appendPCM16(frameCount: 4, scale: 1) { (_) throws(Refused) in throw Refused() }
        }
        #expect(bank.count == 1)
    }
}
