import BellkeysClassroom
import BellkeysModel
import Testing

/// The classroom's bells from each set's instrument, and the teacher changing the set.
@Suite struct ClassroomSets {
    var code: JoinCode {
        var g = FixedGenerator()
        return JoinCode(using: &g)
    }

    func region(_ keys: ClosedRange<Int>, _ change: (inout Region) -> Void = { _ in }) -> Region {
        var r = Region(sampleIndex: 0)
        r.keyRange = keys
        change(&r)
        return r
    }

    func instrument(_ regions: [Region]) -> Instrument {
        var i = Instrument(keys: [])
        i.regions = regions
        return i
    }

    @Test func aMapsKeysAreItsBellsDampedWhereTheKeyDamps() {
        let keys = [64, 60, 62].map {
            KeySettings(note: $0, sampleIndex: 0, noteOff: $0 == 62 ? .ring : .damp(releaseSeconds: 0.1))
        }
        let bells = ClassroomBell.bells(of: Instrument(keys: keys))
        #expect(bells.map(\.note) == [60, 62, 64] && bells.map(\.damps) == [true, false, true])
        #expect(bells.map(\.name) == ["C4", "D4", "E4"])
    }

    /// An instrument of regions: the octave C to C that sounds most keys, the nearest C4 among
    /// equals; each key that sounds; damping unless every region there ignores the release.
    @Test func anInstrumentOfRegionsGivesTheFullestOctaveNearestC4() {
        // A piano: C4..C5.
        #expect(ClassroomBell.bells(of: instrument([region(21...108)])).map(\.note) == Array(60...72))
        // A glockenspiel G4..C7: C5..C6 and C6..C7 both sound 13 keys; C5 is nearer C4.
        #expect(ClassroomBell.bells(of: instrument([region(67...96)])).map(\.note) == Array(72...84))
        // Tubular bells C4..F5 with a gap at E4: the 12 keys of C4..C5 that sound.
        let tubes = ClassroomBell.bells(of: instrument([region(60...63), region(65...77)]))
        #expect(tubes.map(\.note) == [60, 61, 62, 63] + Array(65...72))
        // Low bells G1..A2: C2..C3 sounds 10 of them, more than C1..C2 (6).
        #expect(ClassroomBell.bells(of: instrument([region(31...45)])).map(\.note) == Array(36...45))
        #expect(ClassroomBell.bells(of: instrument([])).isEmpty)
        let mixed = instrument([
            region(60...61) {
                $0.loopMode = .oneShot
                $0.envelope = Envelope()
            },
            region(61...62) { $0.envelope = Envelope() },
            region(63...63) { $0.noteOff = .damp(releaseSeconds: 0.1) },
            region(64...64),
        ])
        #expect(ClassroomBell.bells(of: mixed).map(\.damps) == [false, true, true, true, false])
        // Keys a strike alone does not sound: behind another keyswitch than the default, a
        // controller away from its default, another key held.
        var conditional = instrument([
            region(60...62) { $0.keyswitch = 24 }, region(63...64) { $0.keyswitch = 25 },
            region(65...65) { $0.controllerRanges = [1: 64...127] },
            region(66...66) { $0.controllerRanges = [1: 0...63] },
            region(67...67) { $0.heldKeys = .legato }, region(68...68) { $0.heldKeys = .first },
        ])
        conditional.defaultKeyswitch = 24
        #expect(ClassroomBell.bells(of: conditional).map(\.note) == [60, 61, 62, 66, 68])
    }

    /// The set changes: the bells the new set has stay dealt, the others are taken back; free
    /// play holds every new bell; the pages are told the set's name.
    @Test func changingTheSetKeepsTheDealtBellsItHas() {
        let eight = [60, 62, 64, 65, 67, 69, 71, 72].map { ClassroomBell(note: $0, name: "N\($0)", damps: true) }
        let six = [60, 62, 64, 65, 67, 69].map { ClassroomBell(note: $0, name: "T\($0)", damps: false) }
        let room = Classroom(bells: eight, setName: "Handbells", code: code)
        _ = room.join(connection: 1, address: "a", code: room.code.digits, name: "Ann", at: 0)
        _ = room.join(connection: 2, address: "b", code: room.code.digits, name: "Ben", at: 0)
        #expect(room.bellsJSON(room.devices[0]).hasSuffix(",\"set\":\"Handbells\"}"))
        room.dealRound()
        #expect(room.devices.map(\.dealt) == [[60, 64, 67, 71], [62, 65, 69, 72]])
        #expect(room.changeSet(name: "Tower", bells: six))
        #expect(room.devices.map(\.dealt) == [[60, 64, 67], [62, 65, 69]] && room.mode == .dealt)
        #expect(room.bellsJSON(room.devices[0]).contains("\"name\":\"T60\",\"colour\":\"#e21c48\",\"damps\":false"))
        #expect(room.bellsJSON(room.devices[0]).hasSuffix(",\"set\":\"Tower\"}"))
        #expect(room.perform(.strike(note: 71, velocity: 90), connection: 1, at: 1) == nil)
        // The same notes under other names: not a change of notes.
        #expect(
            !room.changeSet(name: "Tower again", bells: six.map { ClassroomBell(note: $0.note, name: "", damps: true) })
        )
        room.freePlay()
        #expect(room.changeSet(name: nil, bells: eight))
        #expect(room.held(by: room.devices[1]) == [60, 62, 64, 65, 67, 69, 71, 72])
        #expect(room.bellsJSON(room.devices[0]).hasSuffix(",\"set\":null}"))
    }
}
