import BellkeysClassroom
import BellkeysEngine
import BellkeysFormats

#if FUZZING
import CFuzzer
#endif

// What must hold for any input, however malformed. The fuzz targets (Tests/Fuzz/*) trap on a
// violation, so libFuzzer keeps the input; the swift tests run every corpus file through the
// same checks (FuzzCorpusTests), so each saved input stays a regression test.

/// The file names inputs are given, which every error must repeat.
let midiInputName = "fuzz.mid"
let mapInputName = "fuzz.json"
let sfzInputName = "fuzz.sfz"

/// What #include reads while fuzzing an SFZ file: this small file for any path ending in
/// ".sfz"; any other path cannot be read.
let sfzIncludedFile = Array(
    "// included\r\n#define $X 2\nlokey=c4 hikey=7$X /* keys */\n<region> sample=Included Bells\\c#4 .wav\n".utf8)

private struct SFZReadRefused: Error {}

/// Reads `bytes` as a MIDI file. Returns the rules the result broke (empty: all held).
/// A crash or a hang inside the reader is itself the finding.
public func midiFileViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    let file: MIDIFile
    do {
        file = try parseMIDIFile(bytes, file: midiInputName)
    } catch {
        if error.file != midiInputName { broken.append("error names \(error.file), not the file") }
        if error.message.isEmpty || error.fix.isEmpty { broken.append("error without message or fix: \(error)") }
        if let offset = error.offset, !(0...bytes.count).contains(offset) {
            broken.append("error offset \(offset) outside the file of \(bytes.count) bytes")
        }
        return broken
    }
    if !(0...2).contains(file.format) { broken.append("format \(file.format) accepted") }
    for warning in file.warnings where !warning.hasPrefix(midiInputName + ": ") {
        broken.append("a warning that does not name the file: \(warning)")
    }
    if file.trackCount < 1 { broken.append("no tracks accepted") }
    var lastTick = 0
    for event in file.events {
        if event.tick < lastTick { broken.append("events out of order at tick \(event.tick)") }
        lastTick = event.tick
        if !(0x80...0xEF).contains(event.status) { broken.append("status \(event.status) is not a channel message") }
        if event.data1 > 127 || event.data2 > 127 { broken.append("data byte above 127") }
        if (0xC0...0xDF).contains(event.status) && event.data2 != 0 {
            broken.append("one-byte message with a second byte")
        }
    }
    if lastTick > file.endTick { broken.append("event at tick \(lastTick) after the end, \(file.endTick)") }
    var lastTempoTick = 0
    for tempo in file.tempos {
        if tempo.tick < lastTempoTick { broken.append("tempos out of order") }
        lastTempoTick = tempo.tick
        if !(1...0xFF_FFFF).contains(tempo.microsecondsPerQuarter) {
            broken.append("tempo \(tempo.microsecondsPerQuarter)")
        }
    }
    let rate = 48_000
    let (scheduled, endFrame) = file.scheduled(sampleRate: rate)
    var lastFrame: Int64 = 0
    for frame in scheduled.map(\.frame) {
        if frame < lastFrame { broken.append("frames go backwards: \(frame) after \(lastFrame)") }
        lastFrame = frame
    }
    if lastFrame > endFrame { broken.append("event at frame \(lastFrame) after the end, \(endFrame)") }
    // The reader refuses files over 24 hours; one second of slack for rounding at 1 kHz.
    if endFrame > Int64(MIDIFile.maximumSeconds + 1) * Int64(rate) {
        broken.append("file of \(endFrame) frames accepted")
    }
    return broken
}

/// Reads `bytes` as everything the classroom's server reads from the network (hostile input):
/// a pupil's message, a teacher's message, a request head and WebSocket frames. A message
/// read has every value in its range; a refusal names a short printable field and says the
/// problem and the fix; a head or a frame read stays within its limits and its bytes.
public func pupilMessageViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    func printable(_ s: String) -> Bool {
        !s.unicodeScalars.contains {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
        }
    }
    // Both readers share their opening (`openMessage`), each throwing its own error type.
    func refused(_ error: some MessageRefusal, by reader: String) {
        if error.field.isEmpty || error.problem.isEmpty || error.fix.isEmpty {
            broken.append("\(reader) refusal without field, problem or fix: \(error)")
        }
        if error.field.unicodeScalars.count > 33 || !printable(error.field) || !printable(error.problem) {
            broken.append(
                "\(reader) refusal shows back more than it should: \(error.field.unicodeScalars.count) characters")
        }
    }
    do {
        let message = try readPupilMessage(bytes)
        if bytes.count > PupilMessage.maximumBytes { broken.append("read \(bytes.count) bytes") }
        switch message {
        case .join(let code, let name, let resume):
            if let resume, !(8...32).contains(resume.utf8.count) {
                broken.append("resume of \(resume.utf8.count) bytes")
            }
            if code.utf8.count != 4 || !code.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                broken.append("code \(code)")
            }
            let count = name.unicodeScalars.count
            let joiners = name.unicodeScalars.filter { $0 != "\u{200C}" && $0 != "\u{200D}" }.map(Character.init)
            if count < 1 || count > PupilMessage.maximumNameLength || !printable(String(joiners)) {
                broken.append("name of \(count) characters")
            }
        case .strike(let note, let velocity, let at):
            if !(0...127).contains(note) || !(1...127).contains(velocity) {
                broken.append("strike \(note) \(velocity)")
            }
            if let at, !at.isFinite || at < 0 { broken.append("strike at \(at)") }
        case .release(let note), .damp(let note):
            if !(0...127).contains(note) { broken.append("note \(note)") }
        case .ping(let sent):
            if !sent.isFinite || sent < 0 { broken.append("ping \(sent)") }
        }
    } catch {
        refused(error, by: "pupil")
    }
    // The same bytes as the teacher's message, as a request head and as WebSocket frames: the
    // rest of what the classroom's server reads from the network.
    do {
        switch try readTeacherMessage(bytes) {
        case .deal(let device, let notes):
            if device < 1 || notes.count > 13 || notes.contains(where: { !(0...127).contains($0) }) {
                broken.append("deal \(device) \(notes)")
            }
        case .remove(let device): if device < 1 { broken.append("remove \(device)") }
        case .volume(let decibels): if !(-60...12).contains(decibels) { broken.append("volume \(decibels)") }
        case .reverb(let preset): if !TeacherMessage.presets.contains(preset) { broken.append("reverb \(preset)") }
        case .set(let index): if !(0..<MapFile.maximumSets).contains(index) { broken.append("set \(index)") }
        case .velocity(let fixed): if let fixed, !(1...127).contains(fixed) { broken.append("velocity \(fixed)") }
        case .follow(let tune, let tempo):
            if !(0...99).contains(tune) || !(50...200).contains(tempo) { broken.append("follow \(tune) \(tempo)") }
        case .dealRound, .free, .dampAll, .stopFollow: break
        }
    } catch {
        refused(error, by: "teacher")
    }
    switch scanHTTPRequestHead(bytes[...]) {
    case .incomplete:
        if bytes.count > HTTPRequestHead.maximumBytes + 1 {
            broken.append("an incomplete head of \(bytes.count) bytes")
        }
    case .complete(let head, let length):
        if length > bytes.count || length > HTTPRequestHead.maximumBytes + 1 {
            broken.append("a head of \(length) bytes")
        }
        if head.method != "GET" && head.method != "HEAD" { broken.append("method \(head.method)") }
        if !head.target.hasPrefix("/") || head.target.utf8.count > HTTPRequestHead.maximumTargetBytes {
            broken.append("target")
        }
        if head.headers.count > HTTPRequestHead.maximumHeaders { broken.append("\(head.headers.count) headers") }
        if head.headers.contains(where: {
            $0.value.unicodeScalars.contains { $0.value < 32 && $0 != "\t" } || $0.name.isEmpty
        }) {
            broken.append("a header with control bytes or no name")
        }
    case .refused(let status, let reason):
        if ![400, 405, 413, 414, 431, 505].contains(status) || reason.isEmpty {
            broken.append("refused \(status) \(reason)")
        }
    }
    var rest = bytes[...]
    for _ in 0..<64 {
        guard
            case .frame(let opcode, let payload, let length) = scanWebSocketFrame(
                rest, maximumPayload: PupilMessage.maximumBytes)
        else { break }
        if length > rest.count || length < payload.count + 6 {
            broken.append("a frame of \(length) bytes from \(rest.count)")
        }
        if opcode == .text
            ? payload.count > PupilMessage.maximumBytes || String(validating: payload, as: UTF8.self) == nil
            : opcode.rawValue < 8 || payload.count > 125
        {
            broken.append("a frame \(opcode) of \(payload.count) bytes")
        }
        rest = rest.dropFirst(length)
    }
    return broken
}

/// Reads `bytes` as an SFZ file (#include reading `sfzIncludedFile`, or failing). It parses or
/// it throws problems that name a file read and a place inside it; what it parses keeps every
/// value in its range, every place inside its file and every warning once.
public func sfzFileViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    var reads = 0
    /// The byte length of each line of the file messages call `name` (CR, LF and CRLF end lines):
    /// the input, or the file any other path ending in ".sfz" reads.
    func lineLengths(_ name: String) -> [Int]? {
        let text: [UInt8]
        if name == sfzInputName {
            text = bytes
        } else if name.hasSuffix(".sfz") {
            text = sfzIncludedFile
        } else {
            return nil
        }
        var lengths = [0]
        var i = 0
        while i < text.count {
            if text[i] == 10 || text[i] == 13 {
                if text[i] == 13 && i + 1 < text.count && text[i + 1] == 10 { i += 1 }
                lengths.append(0)
            } else {
                lengths[lengths.count - 1] += 1
            }
            i += 1
        }
        return lengths
    }
    let topLines = lineLengths(sfzInputName)!, includedLines = lineLengths("included.sfz")!
    func checkPlace(_ file: String, _ line: Int, _ column: Int, _ what: String) {
        guard file == sfzInputName || file.hasSuffix(".sfz") else { return broken.append("\(what) names \(file)") }
        let lengths = file == sfzInputName ? topLines : includedLines
        // A column counts characters: at most the line's bytes, and one past its end.
        if !(1...lengths.count).contains(line) || column < 1 || column > lengths[line - 1] + 1 {
            broken.append("\(what) at \(file):\(line):\(column), outside the file")
        }
    }
    let sfz: SFZInstrumentDescription
    do {
        sfz = try parseSFZ(bytes, file: sfzInputName) { path in
            reads += 1
            guard path.hasSuffix(".sfz") else { throw SFZReadRefused() }
            return sfzIncludedFile
        }
    } catch {
        if error.problems.isEmpty { broken.append("an error with no problems") }
        for problem in error.problems {
            if problem.message.isEmpty || problem.fix.isEmpty {
                broken.append("problem without message or fix: \(problem)")
            }
            switch (problem.line, problem.column) {
            case (nil, nil):
                if problem.file != sfzInputName { broken.append("a problem of the whole of \(problem.file)") }
            case (let line?, let column?): checkPlace(problem.file, line, column, "problem")
            default: broken.append("a problem with a line and no column, or a column and no line")
            }
        }
        return broken
    }
    if sfz.regions.isEmpty { broken.append("a file without regions accepted") }
    if reads > 1_000 { broken.append("\(reads) files read") }
    if sfz.includedFiles.count > reads || sfz.includedFiles.contains(where: { !$0.hasSuffix(".sfz") })
        || Set(sfz.includedFiles).count != sfz.includedFiles.count
    {
        broken.append("included files \(sfz.includedFiles) from \(reads) reads")
    }
    for (n, value) in sfz.controllerDefaults where !(0...127).contains(n) || !(0...127).contains(value) {
        broken.append("set_cc\(n)=\(value)")
    }
    var messages = Set<String>()
    for warning in sfz.warnings {
        checkPlace(warning.location.file, warning.location.line, warning.location.column, "warning")
        if !messages.insert(warning.message).inserted { broken.append("warned twice: \(warning.message)") }
        if warning.description != "\(warning.location): \(warning.message)" { broken.append("warning text") }
    }
    func inRange(_ range: ClosedRange<Int>, _ values: Int?...) -> Bool {
        values.allSatisfy { $0.map(range.contains) ?? true }
    }
    for r in sfz.regions {
        checkPlace(r.location.file, r.location.line, r.location.column, "region")
        checkPlace(r.sampleLocation.file, r.sampleLocation.line, r.sampleLocation.column, "sample")
        if r.sample.isEmpty || r.sample.contains("\\") || r.sample.first == " " || r.sample.last == " " {
            broken.append("sample \"\(r.sample)\"")
        }
        if !inRange(
            0...127, r.loKey, r.hiKey, r.loVel, r.hiVel, r.pitchKeycenter, r.swLoKey, r.swHiKey, r.swLast, r.swDefault)
            || !inRange(0...127, r.xfinLoVel, r.xfinHiVel, r.xfoutLoVel, r.xfoutHiVel)
            || r.loKey > r.hiKey || r.loVel > r.hiVel || r.xfinLoVel > r.xfinHiVel || r.xfoutLoVel > r.xfoutHiVel
        {
            broken.append("keys or velocities out of range in \(r.location)")
        }
        if !inRange(1...100, r.seqLength, r.seqPosition)
            || !inRange(0...Int(Int32.max), r.offset, r.loopStart, r.loopEnd)
            || !inRange(Int(Int32.min)...Int(Int32.max), r.group, r.offBy) || !inRange(-127...127, r.transpose)
        {
            broken.append("sequence, frames, group or transpose out of range in \(r.location)")
        }
        let numbers: [Double] = [
            r.pitchKeytrack, r.tune, r.volume, r.pan, r.ampegDelay, r.ampegAttack, r.ampegHold, r.ampegDecay,
            r.ampegSustain, r.ampegRelease, r.ampVeltrack, r.cutoff ?? 0, r.resonance, r.filVeltrack, r.filKeytrack,
            r.loRand, r.hiRand, r.offTime, r.bendUp ?? 0, r.bendDown ?? 0,
        ]
        if numbers.contains(where: { !$0.isFinite }) || !(-576...192).contains(r.volume)
            || !(0...100).contains(r.ampegRelease)
            || !(0...1).contains(r.loRand) || !(0...1).contains(r.hiRand) || r.loRand > r.hiRand
        {
            broken.append("a number out of range in \(r.location)")
        }
        if !zip(r.ampVelcurve, r.ampVelcurve.dropFirst()).allSatisfy({ $0.velocity < $1.velocity })
            || r.ampVelcurve.contains(where: { !(0...127).contains($0.velocity) || !(0...1).contains($0.gain) })
        {
            broken.append("velocity curve \(r.ampVelcurve) in \(r.location)")
        }
        for (n, range) in r.ccRanges where !(0...127).contains(n) || range.lowerBound < 0 || range.upperBound > 127 {
            broken.append("cc\(n) \(range) in \(r.location)")
        }
    }
    return broken + sfzCompileViolations(bytes, parsed: sfz)
}

/// The compile step over an SFZ file that parses (`parsed`), every sample it names there: it
/// compiles, asks for each file once, and makes a region of each of the file's, playing a
/// sample it asked for from a frame inside it, for samples of 1 frame and of 1,000 with a loop.
func sfzCompileViolations(_ bytes: [UInt8], parsed: SFZInstrumentDescription) -> [String] {
    // Under another name than the parse's: an #include resolves to "compiled/NAME", never to
    // it unless NAME is "input", which the parse refused (not .sfz).
    let top = "compiled/input"
    let files = FileFinder(find: { $0 }) { path, _, what throws(FileError) in
        if path == top { return bytes }
        guard path.hasSuffix(".sfz") else {
            throw FileError(path: path, operation: "open the \(what)", message: "refused", fix: "none")
        }
        return sfzIncludedFile
    }
    let compiled: CompiledSFZ
    do {
        compiled = try compileSFZ(path: top, files: files)
    } catch {
        return ["it parses but does not compile: \(error)"]
    }
    var broken: [String] = []
    if Set(compiled.samples.map(\.path)).count != compiled.samples.count { broken.append("a file asked for twice") }
    for frames in [1, 1_000] {
        let facts = compiled.samples.indices.map {
            SampleFacts(index: $0, frameCount: frames, rootKey: 61, loop: frames > 1 ? 10...(frames - 10) : nil)
        }
        let regions = compiled.instrument(facts: facts, overriding: nil).instrument.regions
        if regions.count != parsed.regions.count {
            broken.append("\(parsed.regions.count) regions made \(regions.count)")
        }
        for region in regions
        where !compiled.samples.indices.contains(region.sampleIndex) || !(0..<frames).contains(region.offset) {
            broken.append("a region plays sample \(region.sampleIndex) from frame \(region.offset) of \(frames)")
        }
    }
    return broken
}

/// What a fuzz target's executable does when built without libFuzzer: runs each file (or every
/// file in each folder) named on the command line through `check` and prints what broke.
/// Returns the exit status: 0 when every input passed.
public func replay(_ paths: [String], through check: ([UInt8]) -> [String]) -> Int32 {
    var failed = 0
    var count = 0
    for path in paths {
        for file in filesAt(path) {
            guard let bytes = contents(of: file) else {
                print("\(file): cannot read")
                failed += 1
                continue
            }
            count += 1
            let broken = check(bytes)
            if !broken.isEmpty {
                failed += 1
                print("\(file): \(broken.joined(separator: "; "))")
            }
        }
    }
    print("\(count) inputs, \(failed) failed")
    return failed == 0 && count > 0 ? 0 : 1
}

#if FUZZING
/// The rules libFuzzer's callback applies; set once, before the driver starts.
nonisolated(unsafe) private var fuzzedRules: ([UInt8]) -> [String] = { _ in [] }

/// Runs libFuzzer's driver (fuzzing, or replaying the files in `argv`) with `rules` checking
/// every input; a broken rule traps, so libFuzzer keeps the input. Returns the exit status.
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    rules: @escaping ([UInt8]) -> [String]
) -> CInt {
    fuzzedRules = rules
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let broken = fuzzedRules(Array(UnsafeBufferPointer(start: data, count: size)))
        if !broken.isEmpty { fatalError(broken.joined(separator: "; ")) }
        return 0
    }
}
#endif
