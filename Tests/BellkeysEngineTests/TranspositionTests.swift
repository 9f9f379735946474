import BellkeysEngine
import BellkeysModel
import Testing

/// `EngineConfiguration.transpose`: the notes of MIDI inputs (`EngineEvent.transposable`) move,
/// keyswitches and the other inputs' notes do not, and a note-off finds the note its note-on
/// sounded.
@Suite struct Transposition {
    /// Key 60 plays 1.0, key 72 plays 0.5; damped over 48 frames; `transpose` semitones; keys
    /// 36...37 switch articulations.
    private func engine(transpose: Int) -> Engine {
        let keys = [
            KeySettings(note: 60, sampleIndex: 0, noteOff: .damp(releaseSeconds: 0.001)),
            KeySettings(note: 72, sampleIndex: 1, noteOff: .damp(releaseSeconds: 0.001)),
        ]
        var instrument = Instrument(keys: keys)
        instrument.keyswitchRange = 36...37
        var configuration = EngineConfiguration(sampleRate: 48_000, polyphony: 8)
        configuration.limiterThreshold = 1
        configuration.transpose = transpose
        let engine = Engine(
            bank: SampleBank(samples: [constant(1, 10_000), constant(0.5, 10_000)], sampleRate: 48_000),
            instrument: instrument, configuration: configuration)
        engine.enqueue(.control(frame: 0, controller: 7, value: 127))
        return engine
    }

    @Test func aMIDIInputsNoteSoundsTransposedAndItsNoteOffDampsIt() {
        let e = engine(transpose: 12)
        e.enqueue(EngineEvent.noteOn(frame: 0, note: 48, velocity: 127).fromMIDIInput)
        e.enqueue(EngineEvent.noteOff(frame: 100, note: 48).fromMIDIInput)
        let out = render(e, 300)
        #expect(out[0..<100].allSatisfy { $0 == 1 }) // key 60's sample
        #expect(out[148...].allSatisfy { $0 == 0 }) // damped by the note-off of key 48
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 0)
    }

    @Test func theComputerKeyboardsAndPhonesNotesAreNotMoved() {
        let e = engine(transpose: 12)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) // not transposable: key 60
        e.enqueue(.noteOn(frame: 0, note: 48, velocity: 127)) // key 48: no bell
        let out = render(e, 100)
        #expect(out.allSatisfy { $0 == 1 })
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 1)
    }

    @Test func keyswitchKeysAreNotMoved() {
        // Transposed by 24, key 36 would sound key 60; as a keyswitch it sounds nothing, and
        // its note-off stops nothing either.
        let e = engine(transpose: 24)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(EngineEvent.noteOn(frame: 10, note: 36, velocity: 127).fromMIDIInput)
        e.enqueue(EngineEvent.noteOff(frame: 20, note: 36).fromMIDIInput)
        let out = render(e, 200)
        #expect(out.allSatisfy { $0 == 1 })
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 0)
    }

    /// A key that is no keyswitch, moved into the keyswitch range, is left out: it neither
    /// switches nor sounds.
    @Test func aKeyMovedOntoAKeyswitchIsLeftOut() {
        let e = engine(transpose: -24)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(EngineEvent.noteOn(frame: 10, note: 60, velocity: 127).fromMIDIInput) // 36: a keyswitch
        e.enqueue(EngineEvent.noteOff(frame: 20, note: 60).fromMIDIInput)
        let out = render(e, 200)
        #expect(out.allSatisfy { $0 == 1 }) // key 60 (not a MIDI input's) rings on, undamped
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 1)
    }

    @Test func downwardsAndOffTheKeyboard() {
        let e = engine(transpose: -12)
        e.enqueue(EngineEvent.noteOn(frame: 0, note: 84, velocity: 127).fromMIDIInput) // sounds key 72
        e.enqueue(EngineEvent.noteOn(frame: 0, note: 5, velocity: 127).fromMIDIInput) // -7: off the keyboard
        e.enqueue(EngineEvent.noteOff(frame: 0, note: 5).fromMIDIInput)
        let out = render(e, 100)
        #expect(out.allSatisfy { $0 == 0.5 })
        #expect(e.ignoredNotes.load(ordering: .relaxed) == 1)
    }

    /// A MIDI file's events and a JACK MIDI event are a MIDI input's.
    @Test func midiFilesAndRawMIDIAreTransposable() {
        let bytes: [UInt8] = [0x90, 60, 100]
        let event = bytes.withUnsafeBufferPointer { EngineEvent(midi: $0.baseAddress!, count: 3, frame: 0) }
        #expect(event?.transposable == true)
        #expect(EngineEvent.noteOn(frame: 0, note: 60, velocity: 1).transposable == false)
    }
}
