import BellkeysModel
import EngineTestSupport
import Testing

@testable import BellkeysEngine

/// A region's own send into the room (`Region.reverbSend`: a SoundFont zone's), added to the
/// channel's CC91 send, taken from the voice before its pan; and CC91 by FluidSynth's straight
/// line on the channels of an instrument that asks for it, starting at 0.
@Suite struct VoiceSends {
    /// A decaying wave, under an envelope (a SoundFont voice's path).
    static let wave: [Float] = (0..<4_800).map { i in Float((i * 7) % 100 - 50) / 400 * Float(4_800 - i) / 4_800 }

    /// `stereo`: the wave on the left, `right` × the wave on the right.
    func engine(
        send: Float, stereo: Bool = false, right: Float = 1, linear: Bool = true, room: ReverbPreset = .hall
    ) -> Engine {
        let bank = SampleBank(sampleRate: 48_000)
        _ = stereo ? bank.append(left: Self.wave, right: Self.wave.map { $0 * right }) : bank.append(Self.wave)
        var region = Region(sampleIndex: 0)
        region.envelope = Envelope(release: 0.05)
        region.reverbSend = send
        var config = EngineConfiguration(sampleRate: 48_000)
        config.limiterThreshold = 100
        var instrument = Instrument(keys: [], reverb: ReverbSettings(preset: room, mix: 0.5))
        instrument.regions = [region]
        instrument.linearReverbSend = linear
        let e = Engine(bank: bank, instrument: instrument, configuration: config)
        e.enqueue(EngineEvent.control(frame: 0, controller: 7, value: 127))
        return e
    }

    func played(_ e: Engine, cc91: Int? = nil) -> [Float] {
        if let cc91 { e.enqueue(EngineEvent.control(frame: 0, controller: 91, value: cc91)) }
        e.enqueue(.noteOn(frame: 10, note: 60, velocity: 127))
        return render(e, 12_000)
    }

    func expectClose(_ a: [Float], _ b: [Float], within bound: Float, _ what: String) {
        let worst = zip(a, b).map { abs($0 - $1) }.max() ?? 0
        #expect(worst <= bound, "\(what): differs by \(worst)")
    }

    /// A SoundFont channel starts dry (CC91 0, as FluidSynth's); a region's send of 0.5 sends as
    /// CC91 64 does on the line (64 / 128), and the two add.
    @Test func aRegionsSendAddsToTheChannelsOnTheStraightLine() {
        let dry = played(engine(send: 0, room: .off))
        let unsent = played(engine(send: 0))
        #expect(unsent == dry)
        let own = played(engine(send: 0.5)), controller = played(engine(send: 0, linear: true), cc91: 64)
        #expect(own != dry && own[9_000] != 0 && dry[9_000] == 0) // the bell has ended; the room rings on
        expectClose(own, controller, within: 1e-6, "a region's 0.5 against CC91 64")
        // Both: the room's part twice as loud.
        let both = played(engine(send: 0.5), cc91: 64)
        expectClose(zip(both, dry).map { $0 - $1 }, zip(own, dry).map { 2 * ($0 - $1) }, within: 2e-6, "0.5 + 64/128")
        // The square law (bells, SFZ) at 64: (64 / 127)², not 64 / 128.
        let square = played(engine(send: 0, linear: false), cc91: 64)
        let wetSquare = zip(square, dry).map { $0 - $1 }, wetLine = zip(controller, dry).map { $0 - $1 }
        let ratio = wetSquare[9_000] / wetLine[9_000]
        #expect(abs(ratio - Float(64.0 * 64 / (127 * 127)) / 0.5) < 1e-4, "\(ratio)")
    }

    /// A stereo voice sends both its sides, each at 1/√2: a stereo sample of one wave on both
    /// sides sends as its mono wave at √2 × the send (FluidSynth's two voices, each the whole
    /// mono signal, against one centred voice at 1/√2 a side). Its dry sound is the same. With
    /// the right side at half the left, the room hears 1.5 × the wave at 1/√2.
    @Test func aStereoVoiceSendsBothSides() {
        let stereo = played(engine(send: 0.5, stereo: true))
        let mono = played(engine(send: 0.5 * Float(2.0.squareRoot())))
        expectClose(stereo, mono, within: 1e-6, "stereo at 0.5 against mono at 0.707")
        #expect(played(engine(send: 0, stereo: true, room: .off)) == played(engine(send: 0, room: .off)))
        let uneven = zip(
            played(engine(send: 0.5, stereo: true, right: 0.5)),
            played(
                engine(send: 0.5, stereo: true, right: 0.5, room: .off))
        ).map { $0 - $1 }
        let wave = zip(played(engine(send: 0.5 * 1.5 * Float(0.5.squareRoot()))), played(engine(send: 0, room: .off)))
            .map { $0 - $1 }
        expectClose(uneven, wave, within: 1e-6, "sides 1 and 0.5 against the wave at 1.5/√2")
        #expect(uneven[9_000] != 0)
    }

    /// In a dry room a region's send does nothing: the render is the one with none, bit for bit.
    @Test func aDryRoomHasNoSend() {
        let a = played(engine(send: 0.5, room: .off)), b = played(engine(send: 0, room: .off))
        #expect(a.map(\.bitPattern) == b.map(\.bitPattern))
    }
}
