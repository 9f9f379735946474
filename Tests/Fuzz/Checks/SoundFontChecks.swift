import BellkeysEngine
import BellkeysFormats

/// The name the SoundFont fuzz target gives its input in messages.
public let soundFontInputName = "input.sf2"

/// The rules every input of the SoundFont reader keeps: it returns or throws, never traps; an
/// error names the input, a chunk, and a byte inside the input; a font it reads gives, for every
/// preset, regions whose keys, velocities, gains, envelope times and loop points are in range.
public func soundFontViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    let font: SoundFont
    do {
        font = try parseSoundFont(SoundFontBytes(bytes), file: soundFontInputName)
    } catch {
        for problem in error.problems {
            if problem.file != soundFontInputName { broken.append("an error names \(problem.file)") }
            if problem.path.isEmpty { broken.append("an error names no chunk: \(problem.message)") }
            if let byte = problem.byte {
                if !(0...bytes.count).contains(byte) {
                    broken.append("an error names byte \(byte), outside the \(bytes.count) bytes")
                }
                if !problem.description.contains(": at byte \(byte): ") {
                    broken.append("an error does not say its byte: \(problem.description)")
                }
            } else {
                broken.append("an error names no byte: \(problem.message)")
            }
            if problem.fix.isEmpty { broken.append("an error gives no fix") }
        }
        return broken
    }
    for preset in font.presets {
        for zone in voiceZones(of: preset, in: font) ?? [] {
            let header = font.samples[zone.sample]
            let frames = max(2, min(1 << 16, header.end - header.start))
            for region in soundFontRegions(
                zone, header: header, sampleIndex: 0, firstWord: header.start, frameCount: frames,
                sampleRate: max(1, header.sampleRate), bankRate: 44_100)
            {
                let place = "preset \(preset.bank):\(preset.program) sample \(zone.sample)"
                if region.keyRange.lowerBound < 0 || region.keyRange.upperBound > 127 {
                    broken.append("\(place): keys \(region.keyRange)")
                }
                if region.velocityRange.lowerBound < 1 || region.velocityRange.upperBound > 127 {
                    broken.append("\(place): velocities \(region.velocityRange)")
                }
                if !region.gain.isFinite || region.gain < 0 { broken.append("\(place): gain \(region.gain)") }
                if !region.tuneCents.isFinite { broken.append("\(place): tune \(region.tuneCents)") }
                if let gains = region.velocityGains,
                    gains.count != 128 || gains.contains(where: { !$0.isFinite || $0 < 0 })
                {
                    broken.append("\(place): velocity gains")
                }
                if let e = region.envelope,
                    [e.delay, e.attack, e.hold, e.decay, e.sustain, e.release].contains(where: {
                        !$0.isFinite || $0 < 0
                    })
                {
                    broken.append("\(place): envelope \(e)")
                }
                if region.offset < 0 || region.offset >= frames { broken.append("\(place): offset \(region.offset)") }
                if region.loopMode != .noLoop,
                    !(0 <= region.loopStart && region.loopStart < region.loopEnd && region.loopEnd < frames)
                {
                    broken.append("\(place): loop \(region.loopStart)...\(region.loopEnd) in \(frames) frames")
                }
                if !region.cutoff.isFinite || region.cutoff <= 0 { broken.append("\(place): cutoff \(region.cutoff)") }
            }
        }
        // The compile step: the preset compiles or is refused with a problem of this font, asks
        // for each sample once, and its regions play samples it asked for.
        do {
            let compiled = try compileSoundFont(
                path: soundFontInputName, font: font, preset: PresetChoice(bank: preset.bank, program: preset.program),
                sampleRate: nil)
            if Set(compiled.samples).count != compiled.samples.count { broken.append("a sample stored twice") }
            let places = compiled.samples.indices.map { StoredPlace(index: $0, firstWord: 0, frameCount: 2) }
            let regions = compiled.instrument(places: places, overriding: nil).regions
            if regions.contains(where: { !compiled.samples.indices.contains($0.sampleIndex) }) {
                broken.append("preset \(preset.bank):\(preset.program): a region plays a sample not stored")
            }
        } catch {
            if error.problems.contains(where: { $0.file != soundFontInputName || $0.fix.isEmpty }) {
                broken.append("preset \(preset.bank):\(preset.program) refused without its file or a fix")
            }
        }
    }
    return broken
}
