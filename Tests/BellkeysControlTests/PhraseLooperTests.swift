import BellkeysControl
import BellkeysEngine
import BellkeysModel
import EngineTestSupport
import Testing

@Suite struct PhraseLoop {
    /// Plays a phrase live, closes the loop, and lets it repeat through the engine.
    @Test func aLoopedPhraseRepeatsAtExactlyItsLength() {
        let (samples, keys) = impulseKeys()
        let e = makeEngine(samples: samples, keys: keys)
        e.enqueue(.control(frame: 0, channel: 15, controller: 7, value: 127))
        var looper = PhraseLooper(minimumFrames: 1_000)
        let start: Int64 = 1_000, length: Int64 = 30_011 // an odd length: no rounding hides
        #expect(looper.toggle(atFrame: start) == .started)
        let played: [EngineEvent] = [
            .noteOn(frame: 1_500, note: 60, velocity: 127), .noteOff(frame: 2_000, note: 60),
            .noteOn(frame: 11_000, note: 64, velocity: 127),
            .noteOn(frame: 30_500, note: 67, velocity: 127), // still held at the close
        ]
        for event in played {
            looper.record(event)
            e.enqueue(event)
        }
        #expect(looper.toggle(atFrame: start + length) == .closed(lengthFrames: length, noteCount: 3))
        // The loop's own note-off for the held note, at the end of the phrase.
        #expect(looper.phrase.last == EngineEvent(frame: length, status: 0x8F, data1: 67, data2: 0))
        // Render 5 repeats in 64-frame periods, scheduling half a second ahead as bellkeys does.
        let total = Int(start + 6 * length)
        var out = [Float](repeating: 0, count: total)
        var frame = 0
        while frame < total {
            while let event = looper.peek(through: Int64(frame) + 24_000), e.schedule(event) { looper.advance() }
            let n = min(64, total - frame)
            out.withUnsafeMutableBufferPointer { e.render(into: $0.baseAddress! + frame, frameCount: n) }
            frame += n
        }
        var expected: [Int] = []
        for k in 0..<6 {
            for (offset, note) in [(500, 60), (10_000, 64), (29_500, 67)] {
                expected.append(Int(start) + k * Int(length) + offset + note - 60)
            }
        }
        #expect(out.indices.filter { out[$0] != 0 } == expected)
        #expect(e.lateEvents.load(ordering: .relaxed) == 0)
    }

    /// A MIDI keyboard's key still held at the close is let go of as it was struck: transposed
    /// (its note-off is a MIDI input's too), and the computer keyboard's key of the same number
    /// apart from it.
    @Test func aHeldTransposedKeyIsLetGoOfTransposed() {
        var looper = PhraseLooper(minimumFrames: 1_000)
        #expect(looper.toggle(atFrame: 0) == .started)
        looper.record(EngineEvent.noteOn(frame: 100, note: 48, velocity: 100).fromMIDIInput)
        looper.record(.noteOn(frame: 200, note: 48, velocity: 100))
        looper.record(.noteOff(frame: 300, note: 48))
        #expect(looper.toggle(atFrame: 5_000) == .closed(lengthFrames: 5_000, noteCount: 2))
        #expect(
            looper.phrase.last
                == EngineEvent(frame: 5_000, status: 0x8F, data1: 48, data2: 0, transposable: true))
        #expect(looper.phrase.filter { $0.status & 0xF0 == 0x80 }.count == 2)
    }

    @Test func closingEmptyOrTooShortDiscardsAndClearForgets() {
        var looper = PhraseLooper(minimumFrames: 12_000)
        #expect(looper.toggle(atFrame: 0) == .started)
        #expect(looper.toggle(atFrame: 50_000) == .discarded) // no note
        #expect(looper.state == .empty)
        #expect(looper.toggle(atFrame: 0) == .started)
        looper.record(.noteOn(frame: 10, note: 60, velocity: 100))
        #expect(looper.toggle(atFrame: 11_999) == .discarded) // too short
        #expect(looper.toggle(atFrame: 0) == .started)
        looper.record(.noteOn(frame: 10, note: 60, velocity: 100))
        looper.record(.control(frame: 20, controller: 7, value: 10)) // not recorded
        looper.record(.control(frame: 30, controller: 64, value: 127))
        #expect(looper.toggle(atFrame: 20_000) == .closed(lengthFrames: 20_000, noteCount: 1))
        // Note-on on the loop's channel, the pedal, then the held note's and the pedal's ends.
        #expect(
            looper.phrase == [
                EngineEvent(frame: 10, status: 0x9F, data1: 60, data2: 100),
                EngineEvent(frame: 30, status: 0xBF, data1: 64, data2: 127),
                EngineEvent(frame: 20_000, status: 0x8F, data1: 60, data2: 0),
                EngineEvent(frame: 20_000, status: 0xBF, data1: 64, data2: 0),
            ])
        #expect(looper.toggle(atFrame: 30_000) == .busy)
        #expect(looper.peek(through: 20_009) == nil)
        #expect(looper.peek(through: 20_010) == EngineEvent(frame: 20_010, status: 0x9F, data1: 60, data2: 100))
        looper.clear()
        #expect(looper.state == .empty && looper.peek(through: .max) == nil)
    }

    @Test func aFullPhraseKeepsItsFirstEventsAndCountsTheRest() {
        var looper = PhraseLooper(capacity: 4, minimumFrames: 1)
        _ = looper.toggle(atFrame: 0)
        for i in 0..<6 { looper.record(.noteOn(frame: Int64(i), note: 60, velocity: 100)) }
        #expect(looper.phrase.count == 4 && looper.overflowed == 2)
    }
}
