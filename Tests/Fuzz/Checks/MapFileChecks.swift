import BellkeysEngine
import BellkeysFormats
import BellkeysModel

// What must hold of a map file, however malformed (the map-file fuzz target's checks).

/// Reads `bytes` as a map file; a valid map then drives an engine (one tiny sample for every
/// key, the map's own polyphony, gains and note-off modes) through every key, the volume and
/// pedal controllers and all-sound-off, which must end in exact silence.
public func mapFileViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    let map: MapFile
    do {
        map = try parseMapFile(bytes, file: mapInputName)
    } catch {
        if error.problems.isEmpty { broken.append("an error with no problems") }
        for problem in error.problems {
            if problem.file != mapInputName { broken.append("problem names \(problem.file)") }
            if problem.message.isEmpty || problem.fix.isEmpty {
                broken.append("problem without message or fix: \(problem)")
            }
            if (problem.line == nil) != (problem.column == nil) || (problem.line ?? 1) < 1 || (problem.column ?? 1) < 1
            {
                broken.append("bad position \(String(describing: problem.line)):\(String(describing: problem.column))")
            }
        }
        return broken
    }
    if map.keys.isEmpty, map.instrument == nil, map.soundFont == nil, map.sets.isEmpty {
        broken.append("a map without keys, instrument or sets accepted")
    }
    broken += setViolations(map.sets)
    if !MapFile.polyphonyRange.contains(map.polyphony) { broken.append("polyphony \(map.polyphony)") }
    if !Instrument.volumeRange.contains(map.masterVolumeDecibels) {
        broken.append("master \(map.masterVolumeDecibels) dB")
    }
    var seen = Set<Int>()
    for key in map.keys {
        if !(0...127).contains(key.note) || !seen.insert(key.note).inserted {
            broken.append("note \(key.note) bad or twice")
        }
        if let tag = key.tag, !(100...112).contains(tag) || key.note != tag - 40 {
            broken.append("tag \(tag) → \(key.note)")
        }
        if key.sample.isEmpty { broken.append("empty sample name") }
        if !Instrument.volumeRange.contains(key.gainDecibels) { broken.append("gain \(key.gainDecibels) dB") }
        if !MapFile.chokeGroupRange.contains(key.chokeGroup) { broken.append("choke group \(key.chokeGroup)") }
        if case .damp(let release) = key.noteOff, !MapFile.releaseRange.contains(release) {
            broken.append("release \(release) s")
        }
    }
    if !broken.isEmpty { return broken }

    let bank = SampleBank(samples: [[Float](repeating: 0.5, count: 4_800)], sampleRate: 48_000)
    let engine = Engine(
        bank: bank, instrument: map.instrument(sampleIndexForKey: map.keys.map { _ in 0 }),
        configuration: EngineConfiguration(sampleRate: 48_000, polyphony: map.polyphony))
    let block = 64
    let output = UnsafeMutablePointer<Float>.allocate(capacity: block)
    defer { output.deallocate() }
    var frame: Int64 = 0
    func play(_ blocks: Int) {
        for _ in 0..<blocks {
            engine.render(into: output, frameCount: block)
            frame += Int64(block)
            for i in 0..<block where !output[i].isFinite || abs(output[i]) > 1 {
                broken.append("sample \(output[i]) at frame \(frame - Int64(block) + Int64(i))")
                return
            }
        }
    }
    for note in 0...127 {
        _ = engine.enqueue(.noteOn(frame: frame + Int64(note % block), note: note, velocity: 1 + note % 127))
    }
    _ = engine.enqueue(.control(frame: frame, controller: 64, value: 127))
    play(2)
    for note in 0...127 { _ = engine.enqueue(.noteOff(frame: frame, note: note)) }
    _ = engine.enqueue(.control(frame: frame, controller: 7, value: 127))
    _ = engine.enqueue(.control(frame: frame + 3, controller: 11, value: 40))
    _ = engine.enqueue(.control(frame: frame + 9, controller: 64, value: 0))
    play(2)
    _ = engine.enqueue(.control(frame: frame, controller: 123, value: 0))
    _ = engine.enqueue(.control(frame: frame, controller: 120, value: 0))
    // All sound off fades over 5 ms (240 frames): four blocks later nothing may sound.
    play(4)
    play(1)
    if (0..<block).contains(where: { output[$0] != 0 }) || engine.activeVoiceCount != 0 {
        broken.append("still sounding after all sound off: \(engine.activeVoiceCount) voices")
    }
    return broken
}

/// What must hold of the sets of an accepted map (empty for a map of one instrument): each
/// named once, on one line; programs and banks in range, each program and bank choosing one
/// set; channels 0 to 15, each starting on one set; each set an instrument of its own fields
/// (itself with no sets) or a file, not both.
func setViolations(_ sets: [MapSet]) -> [String] {
    var broken: [String] = []
    var names = Set<String>(), choices = Set<String>(), channels = Set<Int>()
    for set in sets {
        if set.name.isEmpty || set.name.contains(where: \.isNewline) || !names.insert(set.name.lowercased()).inserted {
            broken.append("set name \(set.name.debugDescription) empty, on two lines or twice")
        }
        if !MapFile.programRange.contains(set.program) || !(set.bank.map(MapFile.bankRange.contains) ?? true) {
            broken.append("set \(set.name): program \(set.program) bank \(String(describing: set.bank))")
        }
        if !choices.insert("\(String(describing: set.bank)):\(set.program)").inserted {
            broken.append("program \(set.program) chooses two sets")
        }
        for channel in set.channels where !(0...15).contains(channel) || !channels.insert(channel).inserted {
            broken.append("channel \(channel) out of range or in two sets")
        }
        if (set.map == nil) == (set.file == nil) { broken.append("set \(set.name): both or neither of map and file") }
        if let own = set.map, !own.sets.isEmpty { broken.append("set \(set.name) has sets of its own") }
    }
    return broken
}
