import BellkeysEngine
import BellkeysFormats
import BellkeysModel
import CSndFile
import Glibc

/// Reads an SFZ file and preloads every sample its regions name (each file once, stereo kept
/// stereo, at `requested` Hz or the first sample's rate): an instrument of regions, ready to
/// play. Problems (a broken file, a missing sample) are reported together; opcodes bellkeys does
/// not play are listed once each in `warnings`. A map that names the file (`overriding`)
/// replaces, for every region, the values it gives: `noteOff` (ring: note-off is ignored; damp:
/// the release is `releaseSeconds`), `releaseSeconds`, `velocityCurve` (crossfades kept) and
/// `pitchBend`. Thread: control.
func loadSFZInstrument(path: String, sampleRate requested: Int?, start: Double, overriding map: MapFile? = nil)
    throws(InstrumentError) -> LoadedInstrument
{
    let folder = directoryName(path)
    let bytes: [UInt8]
    do {
        bytes = try readFile(path, limit: 4 << 20, what: "SFZ file")
    } catch {
        throw InstrumentError([
            InstrumentProblem(
                file: path, line: nil, column: nil, path: "",
                message: "cannot read the SFZ file: \(error.message)", fix: error.fix)
        ])
    }
    let description = try parseSFZ(bytes, file: path) { included in
        let found = findCaseInsensitively(resolve(included, from: folder)) ?? resolve(included, from: folder)
        return try readFile(found, limit: 4 << 20, what: "included SFZ file")
    }

    var problems: [InstrumentProblem] = []
    var warnings = description.warnings.map(\.description)
    func warnOnce(_ location: SFZLocation, _ message: String) {
        let line = "\(location): \(message)"
        if !warnings.contains(where: { $0.hasSuffix(": " + message) }) { warnings.append(line) }
    }

    // The samples, each file once.
    var pathForRegion: [String?] = []
    for region in description.regions {
        let wanted = resolve(region.sample, from: folder)
        if let found = findCaseInsensitively(wanted) {
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

    let rate = requested ?? firstSampleRate(paths) ?? 48_000
    let bank = SampleBank(sampleRate: rate)
    // Each file once, in the order the regions name them; decoded side by side, stored in order.
    var indexForPath: [String: Int] = [:]
    var requests: [SampleRequest] = [], firstRegion: [SFZRegion] = []
    // No fade at the end of a sample a region loops (see loadSample).
    let looped = Set(
        zip(description.regions, paths).filter { $0.0.loopMode == .continuous || $0.0.loopMode == .sustain }.map(\.1))
    for (region, file) in zip(description.regions, paths) where indexForPath[file] == nil {
        indexForPath[file] = requests.count
        requests.append(SampleRequest(path: file, keepStereo: true, mayLoop: looped.contains(file)))
        firstRegion.append(region)
    }
    var loaded: [LoadedSample] = [], loadedPaths: [String] = []
    for (k, result) in loadSamples(requests, into: bank).enumerated() {
        switch result {
        case .success(let sample):
            indexForPath[requests[k].path] = loaded.count
            loaded.append(sample)
            loadedPaths.append(requests[k].path)
        case .failure(let error):
            let region = firstRegion[k]
            problems.append(
                InstrumentProblem(
                    file: region.sampleLocation.file, line: region.sampleLocation.line,
                    column: region.sampleLocation.column, path: "sample",
                    message: "\"\(region.sample)\" (\(requests[k].path)): \(error.message)", fix: error.fix))
        }
    }
    if !problems.isEmpty { throw InstrumentError(problems) }

    var regions: [Region] = []
    var switches: [Int] = [], switchLow: Int?, switchHigh: Int?, defaultSwitch: Int?
    for (sfz, file) in zip(description.regions, paths) {
        let sample = loaded[indexForPath[file]!]
        guard sfz.loKey <= sfz.hiKey, sfz.loVel <= sfz.hiVel else {
            warnOnce(sfz.location, "a region with an empty key or velocity range never sounds")
            continue
        }
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
        let frames = bank.frameCount(of: sample.index)
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
            region.resonance = sfz.resonance
            region.filterVelocityCents = sfz.filVeltrack
            region.filterKeytrackCents = sfz.filKeytrack
        }
        if let last = sfz.swLast { switches.append(last) }
        if let low = sfz.swLoKey { switchLow = min(switchLow ?? low, low) }
        if let high = sfz.swHiKey { switchHigh = max(switchHigh ?? high, high) }
        if defaultSwitch == nil { defaultSwitch = sfz.swDefault }
        regions.append(region)
    }

    var instrument = Instrument()
    instrument.regions = regions
    instrument.controllerDefaults = description.controllerDefaults
    instrument.followsPitchBend = map?.pitchBend ?? true
    if let low = switchLow ?? switches.min(), let high = switchHigh ?? switches.max() {
        instrument.keyswitchRange = low...high
    }
    instrument.defaultKeyswitch = defaultSwitch
    return LoadedInstrument(
        mapPath: path, map: map ?? MapFile.instrumentDefaults, bank: bank, instrument: instrument, sampleRate: rate,
        samplePaths: loadedPaths,
        fileSampleRates: loaded.map(\.fileSampleRate), fadedEnds: loaded.map(\.fadedEnd),
        loadSeconds: monotonicSeconds() - start, sfz: description, warnings: warnings)
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

/// The rate of the first of `paths` that opens.
private func firstSampleRate(_ paths: [String]) -> Int? {
    for path in paths {
        var info = SF_INFO()
        if let file = sf_open(path, Int32(SFM_READ), &info) {
            sf_close(file)
            if info.samplerate > 0 { return Int(info.samplerate) }
        }
    }
    return nil
}

/// `path` as it is, or else with each part matched to an entry of its folder ignoring case (many
/// instruments were made on Windows, whose file names ignore case); nil if none matches.
/// Thread: control.
public func findCaseInsensitively(_ path: String) -> String? {
    if fileExists(path) { return path }
    let absolute = path.hasPrefix("/")
    var found = absolute ? "/" : "."
    for part in path.split(separator: "/", omittingEmptySubsequences: true) {
        let name = String(part)
        let candidate = found == "/" ? "/" + name : found + "/" + name
        var info = stat()
        if name == "." || name == ".." || stat(candidate, &info) == 0 {
            found = candidate
            continue
        }
        guard let directory = opendir(found) else { return nil }
        defer { closedir(directory) }
        var match: String?
        let wanted = name.lowercased()
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if entryName.lowercased() == wanted {
                match = entryName
                break
            }
        }
        guard let match else { return nil }
        found = found == "/" ? "/" + match : found + "/" + match
    }
    let result = absolute ? found : String(found.dropFirst(2))
    return fileExists(result) ? result : nil
}
