import BellkeysAudio
import BellkeysEngine
import BellkeysFormats
import BellkeysLoading
import BellkeysModel
import BellkeysSystem
import CSndFile
import Foundation
import Testing

/// Loading decodes 16-bit files as integers and several files side by side (`decodeSample`,
/// `loadSamples`). Every bank is compared value for value, with its scales, to what the loader
/// before that change made (`referenceLoadSample`, kept below as it was): mono, stereo and three
/// channels; 8, 16 and 24 bits and floats; WAV and FLAC; resampled or not; quiet, full-scale
/// (with -32768), silent, ending abruptly (faded) or in silence, looped.
@Suite struct SampleLoading {
    /// A test file: name, libsndfile format, rate, channels, and its frames (interleaved, full
    /// scale ±1 as `Double`, quantised by the format; `raw` gives 16-bit values exactly).
    struct Case {
        var name: String
        var format: Int32
        var sampleRate = 48_000
        var channels: Int
        var raw16: [Int16]? = nil
        var frames: [Double] = []
        var loop: (start: UInt32, end: UInt32)? = nil
    }

    static let wav16 = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16)
    static let flac16 = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
    static let wav24 = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_24)
    static let flac24 = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24)
    static let wavU8 = Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_U8)
    static let wavFloat = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)

    /// A decaying tone with noise (a fixed generator), `channels` interleaved, peak `level`, its
    /// last frame at `end` of the peak (0: ends in silence, fades nothing).
    static func tone(frames: Int, channels: Int, level: Double, end: Double = 0.5, seed: UInt64 = 1) -> [Double] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        var out: [Double] = []
        for i in 0..<frames {
            for c in 0..<channels {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                let noise = Double(Int64(bitPattern: state) >> 11) / Double(1 << 52) * 0.05
                let t = Double(i) / 48_000
                var x = (sin(2 * Double.pi * (440 + 110 * Double(c)) * t) + noise) * exp(-t * 3)
                if i == frames - 1 { x = end * (c == 0 ? 1 : -1) }
                out.append(max(-1, min(1, x * level)))
            }
        }
        return out
    }

    static let cases: [Case] = {
        var cases: [Case] = []
        let n = 14_400
        /// A case of `tone`'s frames.
        func add(
            _ name: String, _ format: Int32, channels: Int, level: Double, end: Double = 0.5, rate: Int = 48_000,
            loop: (UInt32, UInt32)? = nil
        ) {
            let frames = tone(frames: n, channels: channels, level: level, end: end)
            cases.append(
                Case(name: name, format: format, sampleRate: rate, channels: channels, frames: frames, loop: loop))
        }
        for (format, name) in [(wav16, "wav"), (flac16, "flac")] {
            let format24 = format == wav16 ? wav24 : flac24
            add("mono16-\(name)", format, channels: 1, level: 0.9)
            add("mono16-silent-end-\(name)", format, channels: 1, level: 0.9, end: 0)
            add("stereo16-\(name)", format, channels: 2, level: 0.9)
            add("stereo16-quiet-\(name)", format, channels: 2, level: 0.07, end: 0.2)
            add("stereo16-silent-end-\(name)", format, channels: 2, level: 0.6, end: 0)
            add("stereo16-44100-\(name)", format, channels: 2, level: 0.9, rate: 44_100)
            add("three16-\(name)", format, channels: 3, level: 0.8)
            add("mono24-\(name)", format24, channels: 1, level: 0.9)
            add("stereo24-\(name)", format24, channels: 2, level: 0.3, end: 0.9)
            // Full scale: -32768 in the middle gives the stereo sample scale 2^-14.
            var full = (0..<2 * n).map { Int16(truncatingIfNeeded: ($0 * 7919) % 65_536 - 32_768) }
            full[2 * n - 1] = 20_000
            cases.append(Case(name: "stereo16-full-\(name)", format: format, channels: 2, raw16: full))
            // -32768 only in the faded end: faded, it leaves the scale at 2^-15.
            var tail = (0..<2 * n).map { Int16(($0 % 200) - 100) * 300 }
            tail[2 * n - 2] = -32_768
            cases.append(Case(name: "stereo16-full-end-\(name)", format: format, channels: 2, raw16: tail))
            // Silent but for a loud end: the peak is in the faded frames alone.
            var end = [Int16](repeating: 0, count: 2 * n)
            for i in (2 * n - 30)..<(2 * n) { end[i] = Int16(i % 2 == 0 ? 9_000 : -7_000) }
            cases.append(Case(name: "stereo16-loud-end-\(name)", format: format, channels: 2, raw16: end))
            let zero = [Int16](repeating: 0, count: 2 * n)
            cases.append(Case(name: "stereo16-zero-\(name)", format: format, channels: 2, raw16: zero))
        }
        add("mono16-44100-wav", wav16, channels: 1, level: 0.9, rate: 44_100)
        add("stereoU8-wav", wavU8, channels: 2, level: 0.9)
        add("monoU8-wav", wavU8, channels: 1, level: 0.9)
        add("stereo-float-wav", wavFloat, channels: 2, level: 0.05, end: 0.3)
        add("mono16-loop-wav", wav16, channels: 1, level: 0.9, loop: (100, 9_000))
        add("stereo16-loop-wav", wav16, channels: 2, level: 0.9, loop: (100, 9_000))
        return cases
    }()

    /// Writes `c` to a file in `folder`; returns its path.
    static func writeCase(_ c: Case, in folder: String) -> String {
        let flac = c.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_FLAC)
        let path = folder + "/" + c.name + (flac ? ".flac" : ".wav")
        var info = SF_INFO()
        info.samplerate = Int32(c.sampleRate)
        info.channels = Int32(c.channels)
        info.format = c.format
        let file = sf_open(path, Int32(SFM_WRITE), &info)!
        if let raw = c.raw16 {
            var values = raw
            #expect(sf_writef_short(file, &values, sf_count_t(raw.count / c.channels)) == raw.count / c.channels)
        } else {
            var values = c.frames.map { Float($0) }
            #expect(sf_writef_float(file, &values, sf_count_t(values.count / c.channels)) == values.count / c.channels)
        }
        sf_close(file)
        if let loop = c.loop { addSampleChunk(to: path, rootKey: 64, loop: loop) }
        return path
    }

    /// Appends a WAV `smpl` chunk (root key, one forward loop, first and last frame) to the file.
    static func addSampleChunk(to path: String, rootKey: UInt32, loop: (start: UInt32, end: UInt32)) {
        var bytes = [UInt8](FileManager.default.contents(atPath: path)!)
        func word(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var chunk = Array("smpl".utf8) + word(60) + word(0) + word(0) + word(20_833) + word(rootKey) + word(0)
        chunk += word(0) + word(0) + word(1) + word(0)
        chunk += word(0) + word(0) + word(loop.start) + word(loop.end) + word(0) + word(0)
        bytes += chunk
        let riff = word(UInt32(bytes.count - 8))
        for k in 0..<4 { bytes[4 + k] = riff[k] }
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
    }

    /// Both banks hold the same samples: channels, scales, frame counts and every value.
    static func expectSame(_ a: SampleBank, _ b: SampleBank, _ what: String) {
        #expect(a.count == b.count, "\(what): sample count")
        #expect(a.channelCounts == b.channelCounts, "\(what): channels")
        #expect(a.scales == b.scales, "\(what): scales")
        #expect(a.frameCounts == b.frameCounts, "\(what): frames")
        guard a.count == b.count, a.channelCounts == b.channelCounts, a.frameCounts == b.frameCounts else { return }
        for s in 0..<a.count {
            var differ = 0
            for f in 0..<a.frameCount(of: s) {
                for c in 0..<a.channelCounts[s] {
                    if a.value(sample: s, frame: f, channel: c) != b.value(sample: s, frame: f, channel: c) {
                        differ += 1
                    }
                }
            }
            #expect(differ == 0, "\(what): sample \(s), \(differ) values differ")
        }
    }

    static func expectSame(_ a: ReferenceSample, _ b: LoadedSample, _ what: String) {
        #expect(a.index == b.index, "\(what)")
        #expect(a.fileSampleRate == b.fileSampleRate && a.channelCount == b.channelCount, "\(what)")
        #expect(a.fadedEnd == b.fadedEnd, "\(what): faded")
        #expect(a.storedChannels == b.storedChannels, "\(what): stored channels")
        #expect(a.rootKey == b.rootKey && a.loop == b.loop, "\(what): root key, loop")
    }

    @Test func eachFileLoadsAsTheLoaderBeforeLoadedIt() throws {
        let folder = temporaryFolder()
        let paths = Self.cases.map { Self.writeCase($0, in: folder) }
        var fades = 0
        for (c, path) in zip(Self.cases, paths) {
            for keepStereo in [false, true] {
                for mayLoop in [false, true] {
                    let what = "\(c.name) keepStereo \(keepStereo) mayLoop \(mayLoop)"
                    let before = SampleBank(sampleRate: 48_000), after = SampleBank(sampleRate: 48_000)
                    let a = try referenceLoadSample(path: path, into: before, keepStereo: keepStereo, mayLoop: mayLoop)
                    let b = try loadSample(path: path, into: after, keepStereo: keepStereo, mayLoop: mayLoop)
                    Self.expectSame(a, b, what)
                    Self.expectSame(before, after, what)
                    if a.fadedEnd { fades += 1 }
                }
            }
        }
        // The cases reach the paths they are for: faded ends, scales other than 2^-15.
        #expect(fades > 20)
        let stereo = SampleBank(sampleRate: 48_000)
        for name in ["stereo16-quiet-flac", "stereo16-full-wav", "stereo16-full-end-wav", "stereo16-loud-end-flac"] {
            let index = Self.cases.firstIndex { $0.name == name }!
            _ = try loadSample(path: paths[index], into: stereo, keepStereo: true)
        }
        #expect(stereo.scales[0] < 1.0 / 32_768 && stereo.scales[3] < 1.0 / 32_768)
        #expect(stereo.scales[1] == 1.0 / 16_384 && stereo.scales[2] == 1.0 / 32_768)
        let looped = try loadSample(path: paths.last!, into: stereo, keepStereo: true)
        #expect(looped.rootKey == 64 && looped.loop == 100...9_000 && !looped.fadedEnd)
    }

    @Test func filesDecodedSideBySideLandInTheirOrder() throws {
        let folder = temporaryFolder()
        let paths = Self.cases.map { Self.writeCase($0, in: folder) }
        // Long and short files in turn, so the two threads finish out of order.
        let long = folder + "/long.flac"
        let longFrames = Self.tone(frames: 96_000, channels: 2, level: 0.9)
        _ = Self.writeCase(Case(name: "long", format: Self.flac16, channels: 2, frames: longFrames), in: folder)
        var requests: [SampleRequest] = []
        for path in paths {
            requests.append(SampleRequest(path: long, keepStereo: true))
            requests.append(SampleRequest(path: path, keepStereo: true, mayLoop: requests.count % 3 == 0))
        }
        let reference = SampleBank(sampleRate: 48_000)
        var expected: [ReferenceSample] = []
        for r in requests {
            expected.append(
                try referenceLoadSample(path: r.path, into: reference, keepStereo: r.keepStereo, mayLoop: r.mayLoop))
        }
        for threads in [1, 2, 3] {
            let bank = SampleBank(sampleRate: 48_000)
            let results = loadSamples(requests, into: bank, threads: threads)
            for (k, result) in results.enumerated() {
                Self.expectSame(expected[k], try result.get(), "threads \(threads), request \(k)")
            }
            Self.expectSame(reference, bank, "threads \(threads)")
        }
    }

    @Test func problemsComeBackInTheirPlaces() throws {
        let folder = temporaryFolder()
        let good = Self.writeCase(Self.cases[2], in: folder)
        write("not audio", to: folder + "/text.wav")
        let requests = [good, folder + "/missing.wav", good, folder + "/text.wav", folder, good].map {
            SampleRequest(path: $0, keepStereo: true)
        }
        for threads in [1, 2] {
            let results = loadSamples(requests, into: SampleBank(sampleRate: 48_000), threads: threads)
            let messages = results.map { result -> String in
                switch result {
                case .success(let sample): "sample \(sample.index)"
                case .failure(let error): error.message
                }
            }
            #expect(messages[0] == "sample 0" && messages[2] == "sample 1" && messages[5] == "sample 2")
            #expect(messages[1] == "no such file")
            #expect(messages[3].hasPrefix("libsndfile cannot read it: "))
            #expect(messages[4] == "it is a folder, not a sound file")
        }
    }
}

// The loader as it was before 16-bit stereo files were read as integers (main at 5a9c420,
// Sources/BellkeysLoading/SampleFile.swift, `loadSample`), word for word: the reference the tests
// above hold the new one to. It returns a `ReferenceSample` and throws a `ReferenceError`, as
// `LoadedSample` and `SampleError` have no public initialisers.
struct ReferenceError: Error {
    var message: String
    var fix: String
}

struct ReferenceSample {
    var index: Int
    var fileSampleRate: Int
    var channelCount: Int
    var fadedEnd: Bool
    var storedChannels = 1
    var rootKey: Int?
    var loop: ClosedRange<Int>?
}

func referenceLoadSample(path: String, into bank: SampleBank, keepStereo: Bool = false, mayLoop: Bool = false)
    throws -> ReferenceSample
{
    var info = SF_INFO()
    guard let file = sf_open(path, Int32(SFM_READ), &info) else {
        let message = String(cString: sf_strerror(nil))
        if isFolder(path) {
            throw ReferenceError(
                message: "it is a folder, not a sound file",
                fix: "name the sound file inside it, relative to the map file's folder")
        }
        let missing = !fileExists(path)
        throw ReferenceError(
            message: missing ? "no such file" : "libsndfile cannot read it: \(message)",
            fix: missing
                ? "check the file name; sample paths are relative to the map file's folder"
                : "use WAV, AIFF, FLAC or Ogg Vorbis (convert with e.g. `sox in.mp3 out.wav`)")
    }
    defer { sf_close(file) }
    guard info.frames > 0 else {
        throw ReferenceError(
            message: "the file has no audio frames (zero length)",
            fix: "record or export the bell again; a sample needs at least one frame")
    }
    guard info.frames <= 48_000 * 600 else {
        throw ReferenceError(
            message:
                "the file has \(info.frames) frames, more than the 28,800,000 (10 minutes at 48 kHz) a sample may have",
            fix: "trim the sample: a bell needs a few seconds")
    }
    let frameCount = Int(info.frames), channels = Int(info.channels), rate = Int(info.samplerate)
    var fadesEnd = !mayLoop
    var instrument = SF_INSTRUMENT()
    let hasInstrument =
        sf_command(file, Int32(SFC_GET_INSTRUMENT), &instrument, Int32(MemoryLayout<SF_INSTRUMENT>.size))
        == Int32(SF_TRUE)
    let rootKey = hasInstrument && (0...127).contains(Int(instrument.basenote)) ? Int(instrument.basenote) : nil
    var loop: ClosedRange<Int>?
    var loopMode: Int32 = 0, loopStart: UInt32 = 0, loopEnd: UInt32 = 0
    if hasInstrument, bellkeys_first_loop(&instrument, &loopMode, &loopStart, &loopEnd) != 0,
        loopMode != Int32(SF_LOOP_NONE)
    {
        // libsndfile gives the end one past the last frame played (it adds 1 to smpl's end).
        let ratio = Double(bank.sampleRate) / Double(rate)
        let start = Int((Double(loopStart) * ratio).rounded())
        let end = Int((Double(loopEnd) * ratio).rounded()) - 1
        if start >= 0, end > start { loop = start...end }
    }
    if loop != nil { fadesEnd = false }
    let subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    let sixteenBitsOrFewer = [SF_FORMAT_PCM_16, SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8].map { Int32($0) }.contains(subtype)
    func readFailure() -> ReferenceError {
        ReferenceError(
            message: "libsndfile could not read all frames: \(String(cString: sf_strerror(file)))",
            fix: "the file is damaged or truncated: export it again")
    }

    if channels == 1, rate == bank.sampleRate, sixteenBitsOrFewer {
        var faded = false
        let index = try bank.appendPCM16(frameCount: frameCount, scale: 1.0 / 32768) { (buffer) throws in
            guard sf_readf_short(file, buffer.baseAddress, info.frames) == info.frames else { throw readFailure() }
            let fade =
                !fadesEnd
                ? []
                : abruptEndFade(
                    lastValue: Float(buffer[frameCount - 1]) / 32768, frameCount: frameCount, sampleRate: rate)
            for (k, gain) in fade.enumerated() {
                let i = frameCount - fade.count + k
                buffer[i] = Int16((Float(buffer[i]) * gain).rounded())
            }
            faded = !fade.isEmpty
        }
        return ReferenceSample(
            index: index, fileSampleRate: rate, channelCount: channels, fadedEnd: faded, rootKey: rootKey, loop: loop)
    }

    var interleaved = [Float](repeating: 0, count: frameCount * channels)
    let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
    guard read == info.frames else { throw readFailure() }
    if let bad = interleaved.firstIndex(where: { !$0.isFinite }) {
        throw ReferenceError(
            message: "frame \(bad / channels) is not a finite number (NaN or infinity)",
            fix: "export the sample again from a sound editor")
    }
    var sides: [[Float]]
    if channels == 1 {
        sides = [interleaved]
    } else if channels == 2, keepStereo {
        sides = [
            (0..<frameCount).map { interleaved[2 * $0] }, (0..<frameCount).map { interleaved[2 * $0 + 1] },
        ]
    } else {
        var mono = [Float](repeating: 0, count: frameCount)
        for i in 0..<frameCount {
            var sum: Float = 0
            for c in 0..<channels { sum += interleaved[i * channels + c] }
            mono[i] = sum / Float(channels)
        }
        sides = [mono]
    }
    interleaved = []
    for k in sides.indices { sides[k] = try resample(sides[k], from: rate, to: bank.sampleRate) }
    // Both sides of a stereo sample fade together if either ends abruptly.
    let loudest = sides.map { abs($0[$0.count - 1]) }.max()!
    let fade =
        !fadesEnd ? [] : abruptEndFade(lastValue: loudest, frameCount: sides[0].count, sampleRate: bank.sampleRate)
    for k in sides.indices {
        for (j, gain) in fade.enumerated() { sides[k][sides[k].count - fade.count + j] *= gain }
    }
    let faded = !fade.isEmpty
    let index = sides.count == 2 ? bank.append(left: sides[0], right: sides[1]) : bank.append(sides[0])
    return ReferenceSample(
        index: index, fileSampleRate: rate, channelCount: channels, fadedEnd: faded, storedChannels: sides.count,
        rootKey: rootKey, loop: loop)
}
