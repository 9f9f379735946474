import BellkeysModel

// An SFZ file compiled to the model: read with its #includes through a `FileFinder`, its samples
// found, and, once they are stored, its regions made.

/// An SFZ file read, its samples found: the sample files its regions play (each once, in the
/// order the regions first name them), and which one each region plays. The regions become the
/// model's once the samples are stored (`instrument(facts:overriding:)`). Thread: any.
public struct CompiledSFZ: Sendable {
    /// The file as the user named it.
    public var path: String
    /// Its regions as read, every opcode resolved.
    public var description: SFZInstrumentDescription
    /// The sample files, stereo kept, each marked when a region loops it.
    public var samples: [SampleRequest]
    /// Per region of `description`: the index of its sample in `samples`.
    public var sampleOfRegion: [Int]
    /// Per sample: the first region that names it (where a problem with the file is reported).
    public var firstRegionOfSample: [Int]

    /// The problem of sample `index` that could not be stored, at the first region naming it.
    public func problem(sample index: Int, _ error: SampleError) -> InstrumentProblem {
        let region = description.regions[firstRegionOfSample[index]]
        return InstrumentProblem(
            file: region.sampleLocation.file, line: region.sampleLocation.line,
            column: region.sampleLocation.column, path: "sample",
            message: "\"\(region.sample)\" (\(samples[index].path)): \(error.message)", fix: error.fix)
    }
}

/// Reads the SFZ file at `path` (and the files it includes) through `files` and finds every
/// sample its regions name, relative to its folder, ignoring case. Problems (a broken file,
/// missing samples) are reported together. Thread: any.
public func compileSFZ(path: String, files: FileFinder) throws(InstrumentError) -> CompiledSFZ {
    let folder = directoryName(path)
    let bytes: [UInt8]
    do {
        bytes = try files.read(path, 4 << 20, "SFZ file")
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: path, line: nil, column: nil, path: "",
                message: "cannot read the SFZ file: \(error.message)", fix: error.fix)
        ])
    }
    let description = try parseSFZ(bytes, file: path) { included in
        let found = files.find(resolve(included, from: folder)) ?? resolve(included, from: folder)
        return try files.read(found, 4 << 20, "included SFZ file")
    }

    var problems: [InstrumentProblem] = []
    var pathForRegion: [String?] = []
    for region in description.regions {
        let wanted = resolve(region.sample, from: folder)
        if let found = files.find(wanted) {
            pathForRegion.append(found)
        } else {
            pathForRegion.append(nil)
            problems.append(
                InstrumentProblem(
                    file: region.sampleLocation.file, line: region.sampleLocation.line,
                    column: region.sampleLocation.column, path: "sample",
                    message: "\"\(region.sample)\" (\(wanted)): no such file",
                    fix:
                        "check the name; samples are found relative to the SFZ file's folder (with default_path), ignoring case"
                ))
        }
    }
    if !problems.isEmpty { throw InstrumentError(problems) }
    let paths = pathForRegion.map { $0! }

    // Each file once, in the order the regions name them. No fade at the end of a sample a
    // region loops (see loadSample).
    let looped = Set(
        zip(description.regions, paths).filter { $0.0.loopMode == .continuous || $0.0.loopMode == .sustain }.map(\.1))
    var indexForPath: [String: Int] = [:]
    var samples: [SampleRequest] = [], firstRegion: [Int] = [], sampleOfRegion: [Int] = []
    for (r, file) in paths.enumerated() {
        if let known = indexForPath[file] {
            sampleOfRegion.append(known)
            continue
        }
        indexForPath[file] = samples.count
        sampleOfRegion.append(samples.count)
        samples.append(SampleRequest(path: file, keepStereo: true, mayLoop: looped.contains(file)))
        firstRegion.append(r)
    }
    return CompiledSFZ(
        path: path, description: description, samples: samples, sampleOfRegion: sampleOfRegion,
        firstRegionOfSample: firstRegion)
}

extension CompiledSFZ {
    /// The instrument of regions, given what each sample became in the bank (`facts[i]` for
    /// `samples[i]`): a region without `pitch_keycenter` takes the file's root key, one without
    /// `loop_mode` loops when the file has a loop, and its loop is the file's unless it gives
    /// its own. A map that names the file (`overriding`) replaces, for every region, the values
    /// it gives: `noteOff` (ring: note-off is ignored; damp: the release is `releaseSeconds`),
    /// `releaseSeconds`, `velocityCurve` (crossfades kept) and `pitchBend`. Returns it with the
    /// file's warnings: opcodes bellkeys does not play, regions that never sound, each once.
    /// - Precondition: `facts.count == samples.count`.
    public func instrument(facts: [SampleFacts], overriding map: MapFile?) -> (
        instrument: Instrument, warnings: [String]
    ) {
        precondition(facts.count == samples.count)
        var warnings = description.warnings.map(\.description)
        func warnOnce(_ location: SFZLocation, _ message: String) {
            let line = "\(location): \(message)"
            if !warnings.contains(where: { $0.hasSuffix(": " + message) }) { warnings.append(line) }
        }
        var regions: [Region] = []
        var switches: [Int] = [], switchLow: Int?, switchHigh: Int?, defaultSwitch: Int?
        var switchLocation: SFZLocation?
        for (r, sfz) in description.regions.enumerated() {
            let sample = facts[sampleOfRegion[r]]
            guard sfz.loKey <= sfz.hiKey, sfz.loVel <= sfz.hiVel else {
                warnOnce(sfz.location, "a region with an empty key or velocity range never sounds")
                continue
            }
            regions.append(region(sfz, sample: sample, overriding: map) { warnOnce(sfz.location, $0) })
            if let last = sfz.swLast { switches.append(last) }
            if let low = sfz.swLoKey { switchLow = min(switchLow ?? low, low) }
            if let high = sfz.swHiKey { switchHigh = max(switchHigh ?? high, high) }
            if sfz.swLast != nil || sfz.swLoKey != nil || sfz.swHiKey != nil { switchLocation = sfz.location }
            if defaultSwitch == nil { defaultSwitch = sfz.swDefault }
        }
        var instrument = Instrument(regions: regions)
        instrument.controllerDefaults = description.controllerDefaults
        instrument.followsPitchBend = map?.pitchBend ?? true
        if let low = switchLow ?? switches.min(), let high = switchHigh ?? switches.max() {
            if low <= high {
                instrument.keyswitchRange = low...high
            } else if let switchLocation {
                // sw_hikey below sw_lokey, or one of them given on the far side of every sw_last:
                // no key lies between them, so the keys from one to the other switch.
                instrument.keyswitchRange = high...low
                warnOnce(
                    switchLocation,
                    "the key switch range is upside down (from key \(low) down to key \(high); see sw_lokey, "
                        + "sw_hikey and sw_last): keys \(high) to \(low) are taken as key switches")
            }
        }
        instrument.defaultKeyswitch = defaultSwitch
        return (instrument, warnings)
    }

    /// One region of the model from one of the file's, its sample stored as `sample` says.
    private func region(
        _ sfz: SFZRegion, sample: SampleFacts, overriding map: MapFile?, warn: (String) -> Void
    ) -> Region {
        var region = Region(sampleIndex: sample.index)
        region.keyRange = sfz.loKey...sfz.hiKey
        region.velocityRange = max(1, sfz.loVel)...max(1, sfz.hiVel)
        region.pitchKeycenter = sfz.pitchKeycenter ?? sample.rootKey ?? 60
        region.pitchKeytrackCents = sfz.pitchKeytrack
        region.tuneCents = sfz.tune + 100 * Double(sfz.transpose)
        region.gain = linearGain(decibels: sfz.volume)
        region.pan = max(-1, min(1, sfz.pan / 100))
        region.envelope = Envelope(
            delay: sfz.ampegDelay, attack: sfz.ampegAttack, hold: sfz.ampegHold, decay: sfz.ampegDecay,
            sustain: sfz.ampegSustain / 100, release: sfz.ampegRelease)
        region.velocityGains = velocityGains(sfz)
        if let map {
            let given = map.givenFields
            if given.contains("velocityCurve") {
                var crossfadesOnly = sfz
                crossfadesOnly.ampVeltrack = 0
                let fades = velocityGains(crossfadesOnly)
                region.velocityGains = (0..<128).map { map.velocityCurve.gain(velocity: $0) * fades[$0] }
            }
            if given.contains("noteOff"), case .ring = map.defaultNoteOff { region.ignoresNoteOff = true }
            if given.contains("releaseSeconds") || given.contains("noteOff") {
                region.envelope?.release = map.defaultReleaseSeconds
            }
        }
        let frames = sample.frameCount
        region.offset = max(0, min(sfz.offset, frames - 1))
        region.loopMode = sfz.loopMode ?? (sample.loop != nil ? .continuous : .noLoop)
        region.loopStart = sfz.loopStart ?? sample.loop?.lowerBound ?? 0
        region.loopEnd = sfz.loopEnd ?? sample.loop?.upperBound ?? frames - 1
        switch sfz.trigger {
        case .attack: break
        case .release:
            // A release sample plays once through (as sfizz has it).
            region.triggersOnRelease = true
            region.loopMode = .oneShot
        case .first: region.heldKeys = .first
        case .legato: region.heldKeys = .legato
        }
        region.group = sfz.group
        region.offBy = sfz.offBy ?? 0
        region.offReleases = sfz.offMode == .normal
        if sfz.offMode == .time { region.offFadeSeconds = sfz.offTime }
        if sfz.bendUp != nil || sfz.bendDown != nil {
            region.bendRangeCents = BendRange(up: sfz.bendUp ?? 200, down: sfz.bendDown ?? -200)
        }
        region.sequenceLength = sfz.seqLength
        region.sequencePosition = sfz.seqPosition
        region.randomLow = sfz.loRand
        region.randomHigh = sfz.hiRand
        region.keyswitch = sfz.swLast
        region.controllerRanges = sfz.ccRanges
        if let cutoff = sfz.cutoff {
            region.filter = sfz.filterType
            region.cutoff = cutoff
            // sfizz's lpf_2p has Q = 10^(resonance / 20), 1 at 0 dB, where the model's 0 dB is
            // a Butterworth's 1/√2: 3.01 dB more.
            region.resonance = sfz.resonance + 3.010_299_956_639_812
            region.filterVelocityCents = sfz.filVeltrack
            region.filterKeytrackCents = sfz.filKeytrack
        }
        let (modulation, modulators) = self.modulation(sfz, warn: warn)
        region.modulation = modulation
        if !modulators.isEmpty {
            // (Bounds that hold nothing back: they move only the envelopes' depths.)
            region.noteModulators = NoteModulators(
                modulators: modulators, cutoffRange: 0...Double.infinity, resonanceRange: 0...Double.infinity)
        }
        return region
    }
}

/// A region's gain for each velocity: its curve (`amp_velcurve_N` points joined by straight
/// lines, from 0 at 0 to 1 at 127 unless given; else (v/127)²), scaled by `amp_veltrack` (at
/// t %: 1 − t (1 − curve); a negative t reads the curve backwards), times its velocity
/// crossfades (`xfin_*`, `xfout_*`: straight in gain, or as square roots for
/// `xf_velcurve=power`).
func velocityGains(_ region: SFZRegion) -> [Float] {
    var points = region.ampVelcurve.map { (Double($0.velocity), $0.gain) }
    if !points.isEmpty {
        if points.first!.0 > 0 { points.insert((0, 0), at: 0) }
        if points.last!.0 < 127 { points.append((127, 1)) }
    }
    func curve(_ v: Double) -> Double {
        guard !points.isEmpty else { return (v / 127) * (v / 127) }
        for k in 1..<points.count where v <= points[k].0 {
            let (x0, y0) = points[k - 1], (x1, y1) = points[k]
            return x1 == x0 ? y1 : y0 + (y1 - y0) * (v - x0) / (x1 - x0)
        }
        return points.last!.1
    }
    func ramp(_ v: Int, _ low: Int, _ high: Int) -> Double {
        if v <= low { return low == high && v == low ? 1 : 0 }
        if v >= high { return 1 }
        return Double(v - low) / Double(high - low)
    }
    let track = region.ampVeltrack / 100
    return (0..<128).map { v in
        let g = track >= 0 ? curve(Double(v)) : curve(Double(127 - v))
        var gain = 1 - abs(track) * (1 - g)
        var fadeIn = ramp(v, region.xfinLoVel, region.xfinHiVel)
        if region.xfinLoVel == 0, region.xfinHiVel == 0 { fadeIn = 1 }
        var fadeOut = 1 - ramp(v, region.xfoutLoVel, region.xfoutHiVel)
        if region.xfoutLoVel == region.xfoutHiVel { fadeOut = v > region.xfoutHiVel ? 0 : 1 }
        if region.xfVelcurve == .power {
            fadeIn = fadeIn.squareRoot()
            fadeOut = fadeOut.squareRoot()
        }
        gain *= fadeIn * fadeOut
        return Float(max(0, gain))
    }
}
