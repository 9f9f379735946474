import BellkeysEngine
import BellkeysModel
import Synchronization
import Testing

@Suite struct NoteOff {
    @Test func dampedVoiceFadesToZeroOverItsReleaseAndFreesItsSlot() {
        let e = makeEngine(
            samples: [constant(1, 10_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 200, note: 60))
        let out = render(e, 400)
        #expect(out[0..<200].allSatisfy { $0 == 1 })
        for k in 0..<48 { expectClose(out[200 + k], 1 - Float(k) / 48) }
        #expect(out[248...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    @Test func ringingKeyIgnoresNoteOff() {
        let e = makeEngine(samples: [constant(1, 1_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .ring)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 10, note: 60))
        let out = render(e, 1_100)
        #expect(out[0..<1_000].allSatisfy { $0 == 1 })
        #expect(out[1_000...].allSatisfy { $0 == 0 })
    }

    @Test func sustainPedalHoldsDampingUntilReleased() {
        let e = makeEngine(
            samples: [constant(1, 10_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        e.enqueue(.control(frame: 0, controller: 64, value: 127))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 100, note: 60))
        e.enqueue(.control(frame: 500, controller: 64, value: 0))
        let out = render(e, 700)
        #expect(out[0..<500].allSatisfy { $0 == 1 })
        for k in 0..<48 { expectClose(out[500 + k], 1 - Float(k) / 48) }
        #expect(out[548...].allSatisfy { $0 == 0 })
    }

    @Test func keyHeldThroughPedalReleaseKeepsSounding() {
        let e = makeEngine(
            samples: [constant(1, 10_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        e.enqueue(.control(frame: 0, controller: 64, value: 127))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.control(frame: 100, controller: 64, value: 0))
        #expect(render(e, 300).allSatisfy { $0 == 1 })
    }

    @Test func allNotesOffReleasesDampedKeysEvenSustainedAndLetsBellsRing() {
        let e = makeEngine(
            samples: [constant(0.5, 10_000), constant(0.25, 10_000)],
            keys: [
                KeySettings(note: 60, sampleIndex: 0, noteOff: release48),
                KeySettings(note: 62, sampleIndex: 1, noteOff: .ring),
            ])
        e.enqueue(.control(frame: 0, controller: 64, value: 127))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 0, note: 62, velocity: 127))
        e.enqueue(.control(frame: 100, controller: 123, value: 0))
        let out = render(e, 300)
        #expect(out[0..<100].allSatisfy { $0 == 0.75 })
        #expect(out[148...].allSatisfy { $0 == 0.25 })
    }

    @Test func allSoundOffSilencesEverythingWithinFiveMilliseconds() {
        let e = makeEngine(
            samples: [constant(0.5, 48_000)], keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: .ring)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 10, note: 60, velocity: 127))
        e.enqueue(.control(frame: 1_000, controller: 120, value: 0))
        let out = render(e, 2_000)
        #expect(out[999] == 1)
        for k in 0..<240 { expectClose(out[1_000 + k], 1 - Float(k) / 240) }
        #expect(out[1_240...].allSatisfy { $0 == 0 })
        #expect(e.activeVoiceCount == 0)
    }

    @Test func resetAllControllersLiftsThePedalAndRestoresExpression() {
        let e = makeEngine(
            samples: [constant(1, 10_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        e.enqueue(.control(frame: 0, controller: 11, value: 0))
        e.enqueue(.control(frame: 0, controller: 64, value: 127))
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 1, note: 60))
        e.enqueue(.control(frame: 100, controller: 121, value: 0))
        let out = render(e, 300)
        #expect(out[0..<100].allSatisfy { $0 == 0 })
        #expect(out[130] > 0) // expression back up while releasing
        #expect(out[148...].allSatisfy { $0 == 0 })
    }

    @Test func noteOffOnlyReleasesItsOwnChannel() {
        let e = makeEngine(
            samples: [constant(1, 10_000)],
            keys: [KeySettings(note: 60, sampleIndex: 0, noteOff: release48)])
        e.enqueue(.control(frame: 0, channel: 1, controller: 7, value: 127))
        e.enqueue(.noteOn(frame: 0, channel: 1, note: 60, velocity: 127))
        e.enqueue(.noteOff(frame: 10, channel: 0, note: 60))
        #expect(render(e, 200).allSatisfy { $0 == 1 })
    }
}

@Suite struct VoiceAllocation {
    @Test func chokeGroupFadesTheOtherKeyOverFiveMilliseconds() {
        let e = makeEngine(
            samples: [constant(0.5, 48_000), constant(0.25, 48_000)],
            keys: [
                KeySettings(note: 60, sampleIndex: 0, chokeGroup: 1),
                KeySettings(note: 62, sampleIndex: 1, chokeGroup: 1),
            ])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 62, velocity: 127))
        let out = render(e, 600)
        for k in 0..<240 { expectClose(out[100 + k], 0.25 + 0.5 * (1 - Float(k) / 240)) }
        #expect(out[340...].allSatisfy { $0 == 0.25 })
        #expect(e.activeVoiceCount == 1)
    }

    @Test func chokeGroupAlsoChokesTheSameKeyStruckAgain() {
        let e = makeEngine(
            samples: [constant(0.5, 48_000)], keys: [KeySettings(note: 60, sampleIndex: 0, chokeGroup: 3)])
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 100, note: 60, velocity: 127))
        let out = render(e, 600)
        #expect(out[340...].allSatisfy { $0 == 0.5 })
    }

    @Test func fullPoolStealsTheOldestWithAFadeAndNeverDropsTheNewest() {
        let e = makeEngine(
            samples: [constant(0.125, 48_000), constant(0.25, 48_000), constant(0.5, 48_000)],
            keys: [
                KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 62, sampleIndex: 1),
                KeySettings(note: 64, sampleIndex: 2),
            ],
            polyphony: 2)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127))
        e.enqueue(.noteOn(frame: 10, note: 62, velocity: 127))
        e.enqueue(.noteOn(frame: 20, note: 64, velocity: 127))
        let out = render(e, 400)
        #expect(out[19] == 0.375)
        for k in 0..<240 { expectClose(out[20 + k], 0.75 + 0.125 * (1 - Float(k) / 240)) }
        #expect(out[260...].allSatisfy { $0 == 0.75 })
        #expect(e.stolenVoices.load(ordering: .relaxed) == 1)
        #expect(e.cutVoices.load(ordering: .relaxed) == 0)
    }

    @Test func releasedVoicesAreStolenBeforeHeldOnes() {
        let e = makeEngine(
            samples: [constant(0.125, 48_000), constant(0.25, 48_000), constant(0.5, 48_000)],
            keys: [
                KeySettings(note: 60, sampleIndex: 0), KeySettings(note: 62, sampleIndex: 1),
                KeySettings(note: 64, sampleIndex: 2),
            ],
            polyphony: 2)
        e.enqueue(.noteOn(frame: 0, note: 60, velocity: 127)) // oldest, key held
        e.enqueue(.noteOn(frame: 10, note: 62, velocity: 127))
        e.enqueue(.noteOff(frame: 15, note: 62)) // ringing, key up
        e.enqueue(.noteOn(frame: 20, note: 64, velocity: 127))
        let out = render(e, 400)
        #expect(out[260...].allSatisfy { $0 == 0.625 }) // 60 and 64 remain
    }

    @Test func fadingVoicesNeverBlockANewNote() {
        // Polyphony 1: every note steals, and fades pile up faster than they end.
        let e = makeEngine(
            samples: [constant(0.25, 48_000)], keys: [KeySettings(note: 60, sampleIndex: 0)], polyphony: 1)
        for i in 0..<10 { e.enqueue(.noteOn(frame: Int64(i), note: 60, velocity: 127)) }
        let out = render(e, 1_000)
        #expect(out[600...].allSatisfy { $0 == 0.25 })
        #expect(e.stolenVoices.load(ordering: .relaxed) == 9)
        #expect(e.cutVoices.load(ordering: .relaxed) == 8)
        #expect(e.clippedSamples.load(ordering: .relaxed) == 0)
    }

    @Test func fullQueueCountsADrop() {
        let e = makeEngine(
            samples: [constant(1, 10)], keys: [KeySettings(note: 60, sampleIndex: 0)],
            unityVolume: false
        ) { $0.eventCapacity = 4 }
        for i in 0..<4 { #expect(e.enqueue(.noteOn(frame: Int64(i), note: 60, velocity: 127))) }
        #expect(!e.enqueue(.noteOn(frame: 9, note: 60, velocity: 127)))
        #expect(e.droppedEvents.load(ordering: .relaxed) == 1)
        _ = render(e, 64)
        #expect(e.events.count == 0)
        #expect(e.enqueue(.noteOn(frame: 99, note: 60, velocity: 127)))
    }

    @Test func lateEventsPlayAtOnceAndAreCounted() {
        let e = makeEngine(samples: [constant(1, 10)], keys: [KeySettings(note: 60, sampleIndex: 0)])
        _ = render(e, 100)
        e.enqueue(.noteOn(frame: 50, note: 60, velocity: 127))
        #expect(render(e, 10)[0] == 1)
        #expect(e.lateEvents.load(ordering: .relaxed) == 1)
    }
}
