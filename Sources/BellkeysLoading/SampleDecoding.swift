import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import CSndFile
import Glibc
import Synchronization

/// A sample file decoded to the 16-bit values a `SampleBank` stores, not yet in a bank: what a
/// decoding thread hands to the thread that fills the bank (`loadSamples`). A mono file of 16
/// bits or fewer, uncompressed and at the bank's rate, is handed over open and unread instead:
/// reading it is a copy, which `store` makes straight into the bank (no second copy, no more
/// memory than the sample's). Thread: made on a decoder, stored on control.
final class DecodedSample: @unchecked Sendable {
    private enum Content {
        /// Frames as the bank keeps them, `storedChannels` interleaved, each meaning `value × scale`.
        case values(UnsafeMutableBufferPointer<Int16>, scale: Float)
        /// An open file of `frameCount` mono frames at the bank's rate, to be faded at its end
        /// if abrupt and `fades`.
        case unread(file: OpaquePointer, frameCount: Int, fades: Bool)
    }
    private let content: Content
    /// What `LoadedSample` reports of the file (its `index` and `fadedEnd` are set by `store`
    /// for an unread file).
    private let description: LoadedSample

    init(values: UnsafeMutableBufferPointer<Int16>, scale: Float, description: LoadedSample) {
        content = .values(values, scale: scale)
        self.description = description
    }

    init(unread file: OpaquePointer, frameCount: Int, fades: Bool, description: LoadedSample) {
        content = .unread(file: file, frameCount: frameCount, fades: fades)
        self.description = description
    }

    deinit {
        switch content {
        case .values(let values, _): values.deallocate()
        case .unread(let file, _, _): sf_close(file)
        }
    }

    /// Adds the sample to `bank`; returns what was loaded, with its index.
    func store(into bank: SampleBank) throws(SampleError) -> LoadedSample {
        var loaded = description
        switch content {
        case .values(let values, let scale):
            let channels = description.storedChannels
            loaded.index = bank.appendPCM16(frameCount: values.count / channels, channels: channels, scale: scale) {
                $0.baseAddress!.update(from: values.baseAddress!, count: values.count)
            }
        case .unread(let file, let frameCount, let fades):
            loaded.index = try bank.appendPCM16(frameCount: frameCount, scale: 1.0 / 32768) {
                (buffer) throws(SampleError) in
                guard sf_readf_short(file, buffer.baseAddress, sf_count_t(frameCount)) == frameCount else {
                    throw readFailure(file)
                }
                loaded.fadedEnd = fades && fadeMonoPCM16(buffer, sampleRate: description.fileSampleRate)
            }
        }
        return loaded
    }
}

private func readFailure(_ file: OpaquePointer) -> SampleError {
    SampleError(
        message: "libsndfile could not read all frames: \(String(cString: sf_strerror(file)))",
        fix: "the file is damaged or truncated: export it again")
}

/// libsndfile reports a failed `sf_open` through one global error (`sf_strerror(NULL)`): opening
/// and reading that message under one lock keeps each message with its own file when threads
/// decode side by side.
private let openingLock = Mutex<Void>(())

/// Decodes a sound file into the values `SampleBank` would store for it at `sampleRate` (see
/// `loadSample`, which this is the first half of): byte for byte what decoding to floats and
/// `SampleBank.append` give, with no float copy of a 16-bit file at the bank's rate. Thread:
/// decoder or control (several at once; wraps `sf_open`, `sf_readf_short`, `sf_readf_float`, `SFC_GET_INSTRUMENT`).
func decodeSample(path: String, sampleRate bankRate: Int, keepStereo: Bool, mayLoop: Bool) throws(SampleError)
    -> DecodedSample
{
    var info = SF_INFO()
    let (opened, openMessage) = openingLock.withLock { _ in
        let file = sf_open(path, Int32(SFM_READ), &info)
        return (file, file == nil ? String(cString: sf_strerror(nil)) : "")
    }
    guard let file = opened else { throw openFailure(path: path, libsndfileSays: openMessage) }
    var handedOver = false
    defer { if !handedOver { sf_close(file) } }
    guard info.frames > 0 else {
        throw SampleError(
            message: "the file has no audio frames (zero length)",
            fix: "record or export the bell again; a sample needs at least one frame")
    }
    guard info.frames <= 48_000 * 600 else {
        throw SampleError(
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
        let ratio = Double(bankRate) / Double(rate)
        let start = Int((Double(loopStart) * ratio).rounded())
        let end = Int((Double(loopEnd) * ratio).rounded()) - 1
        if start >= 0, end > start { loop = start...end }
    }
    if loop != nil { fadesEnd = false }
    let subtype = info.format & Int32(SF_FORMAT_SUBMASK)
    let sixteenBitsOrFewer = [SF_FORMAT_PCM_16, SF_FORMAT_PCM_S8, SF_FORMAT_PCM_U8].map { Int32($0) }.contains(subtype)
    var description = LoadedSample(
        index: -1, fileSampleRate: rate, channelCount: channels, fadedEnd: false, rootKey: rootKey, loop: loop)

    // 16-bit (or fewer) at the bank's rate, mono or kept stereo: read as integers, no floats.
    if rate == bankRate, sixteenBitsOrFewer, channels == 1 || (channels == 2 && keepStereo) {
        if channels == 1, info.format & Int32(SF_FORMAT_TYPEMASK) != Int32(SF_FORMAT_FLAC) {
            handedOver = true
            return DecodedSample(unread: file, frameCount: frameCount, fades: fadesEnd, description: description)
        }
        let values = UnsafeMutableBufferPointer<Int16>.allocate(capacity: frameCount * channels)
        guard sf_readf_short(file, values.baseAddress, info.frames) == info.frames else {
            values.deallocate()
            throw readFailure(file)
        }
        let scale: Float
        if channels == 1 {
            scale = 1.0 / 32768
            description.fadedEnd = fadesEnd && fadeMonoPCM16(values, sampleRate: rate)
        } else {
            (scale, description.fadedEnd) = storeStereoPCM16(values, fades: fadesEnd, sampleRate: rate)
            description.storedChannels = 2
        }
        return DecodedSample(values: values, scale: scale, description: description)
    }

    var interleaved = [Float](repeating: 0, count: frameCount * channels)
    let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
    guard read == info.frames else { throw readFailure(file) }
    if let bad = interleaved.firstIndex(where: { !$0.isFinite }) {
        throw SampleError(
            message: "frame \(bad / channels) is not a finite number (NaN or infinity)",
            fix: "export the sample again from a sound editor")
    }
    // `frames`: the sample at the bank's rate, `stored` channels interleaved.
    var frames: [Float]
    let stored: Int
    (frames, stored) = try atBankRate(
        &interleaved, channels: channels, rate: rate, bankRate: bankRate, keepStereo: keepStereo)
    interleaved = []
    let storedFrames = frames.count / stored
    // Both sides of a stereo sample fade together if either ends abruptly.
    let loudest = (0..<stored).map { abs(frames[(storedFrames - 1) * stored + $0]) }.max()!
    let fade = !fadesEnd ? [] : abruptEndFade(lastValue: loudest, frameCount: storedFrames, sampleRate: bankRate)
    for (j, gain) in fade.enumerated() {
        for c in 0..<stored { frames[(storedFrames - fade.count + j) * stored + c] *= gain }
    }
    description.fadedEnd = !fade.isEmpty
    description.storedChannels = stored
    var peak: Float = 0
    for x in frames { peak = max(peak, abs(x)) }
    let scale = powerOfTwoScale(peak: peak)
    let values = UnsafeMutableBufferPointer<Int16>.allocate(capacity: frames.count)
    for (i, x) in frames.enumerated() { values[i] = quantised(x, scale: scale) }
    return DecodedSample(values: values, scale: scale, description: description)
}

/// Why `path` did not open as a sound file (`libsndfileSays`: libsndfile's message): a folder,
/// no such file (with the name it may have meant, when only the case differs), or a file
/// libsndfile cannot read.
private func openFailure(path: String, libsndfileSays: String) -> SampleError {
    if isFolder(path) {
        return SampleError(
            message: "it is a folder, not a sound file",
            fix: "name the sound file inside it, relative to the map file's folder")
    }
    let missing = !fileExists(path)
    // A name that differs only in case: Linux tells them apart, a user's eye does not.
    // (From the first folder or file whose case differs: the part of the name to mend.)
    let near =
        missing
        ? findCaseInsensitively(path).map { found -> String in
            let wanted = path.split(separator: "/"), have = found.split(separator: "/")
            let first = Array(zip(wanted, have)).firstIndex { $0.0 != $0.1 } ?? max(0, have.count - 1)
            return have[first...].joined(separator: "/")
        } : nil
    return SampleError(
        message: missing ? "no such file" : "libsndfile cannot read it: \(libsndfileSays)",
        fix: near.map { "did you mean \"\($0)\"? File names differ in upper and lower case on Linux" }
            ?? (missing
                ? "check the file name; sample paths are relative to the map file's folder"
                : "use WAV, AIFF, FLAC or Ogg Vorbis (convert with e.g. `sox in.mp3 out.wav`)"))
}

/// A decoded sample (`interleaved`, `channels` channels at `rate` Hz) at the bank's rate, one
/// channel stored, or two for a stereo file kept stereo: the frames and the channels stored.
/// `interleaved` is let go as soon as it is no longer needed (a long file is large).
private func atBankRate(
    _ interleaved: inout [Float], channels: Int, rate: Int, bankRate: Int, keepStereo: Bool
) throws(SampleError) -> (frames: [Float], stored: Int) {
    let frameCount = interleaved.count / channels
    var frames: [Float]
    let stored: Int
    if channels == 1 {
        (frames, stored) = (try resample(interleaved, from: rate, to: bankRate), 1)
    } else if channels == 2, keepStereo {
        stored = 2
        if rate == bankRate {
            frames = interleaved
        } else {
            let left = try resample((0..<frameCount).map { interleaved[2 * $0] }, from: rate, to: bankRate)
            let right = try resample((0..<frameCount).map { interleaved[2 * $0 + 1] }, from: rate, to: bankRate)
            interleaved = []
            frames = [Float](repeating: 0, count: 2 * left.count)
            for i in left.indices {
                frames[2 * i] = left[i]
                frames[2 * i + 1] = right[i]
            }
        }
    } else {
        var mono = [Float](repeating: 0, count: frameCount)
        for i in 0..<frameCount {
            var sum: Float = 0
            for c in 0..<channels { sum += interleaved[i * channels + c] }
            mono[i] = sum / Float(channels)
        }
        interleaved = []
        (frames, stored) = (try resample(mono, from: rate, to: bankRate), 1)
    }
    return (frames, stored)
}

/// The 2 ms fade of a mono 16-bit sample that ends abruptly, applied to its values in place;
/// whether there was one. Each faded value is `(v × gain)` rounded.
private func fadeMonoPCM16(_ values: UnsafeMutableBufferPointer<Int16>, sampleRate: Int) -> Bool {
    let frameCount = values.count
    let last = Float(values[frameCount - 1]) / 32768
    let fade = abruptEndFade(lastValue: last, frameCount: frameCount, sampleRate: sampleRate)
    for (k, gain) in fade.enumerated() {
        let i = frameCount - fade.count + k
        values[i] = Int16((Float(values[i]) * gain).rounded())
    }
    return !fade.isEmpty
}

/// Turns a stereo 16-bit file's values (interleaved, as read) into what `SampleBank.append`
/// stores for the same frames read as floats (`v / 32768`): the end faded if it is abrupt and
/// `fades`, the scale the smallest power of two that holds the peak (after the fade), each value
/// `(x / scale)` rounded and held to ±32767. In place; returns the scale and whether it faded.
/// Outside the fade that is exact integer work: the values as they are at scale 2⁻¹⁵, doubled
/// for a quiet sample's finer scale, halved (rounded away from zero) at 2⁻¹⁴, which only a
/// sample holding -32768 gets.
private func storeStereoPCM16(_ values: UnsafeMutableBufferPointer<Int16>, fades: Bool, sampleRate: Int)
    -> (scale: Float, faded: Bool)
{
    let frameCount = values.count / 2
    let last = max(abs(Float(values[2 * frameCount - 2]) / 32768), abs(Float(values[2 * frameCount - 1]) / 32768))
    let fade = fades ? abruptEndFade(lastValue: last, frameCount: frameCount, sampleRate: sampleRate) : []
    let bulk = 2 * (frameCount - fade.count)
    var tail = [Float](repeating: 0, count: 2 * fade.count)
    for (j, gain) in fade.enumerated() {
        for c in 0..<2 { tail[2 * j + c] = Float(values[bulk + 2 * j + c]) / 32768 * gain }
    }
    var largest: Int32 = 0
    for i in 0..<bulk { largest = max(largest, abs(Int32(values[i]))) }
    var peak = Float(largest) / 32768
    for x in tail { peak = max(peak, abs(x)) }
    let scale = powerOfTwoScale(peak: peak)
    if scale < 1.0 / 32768, largest > 0 {
        // A power of two, and |v| × factor <= 32767 by the scale's choice.
        let factor = Int16(1.0 / 32768 / scale)
        for i in 0..<bulk { values[i] &*= factor }
    } else if scale > 1.0 / 32768 {
        for i in 0..<bulk { values[i] = quantised(Float(values[i]) / 32768, scale: scale) }
    }
    for (i, x) in tail.enumerated() { values[bulk + i] = quantised(x, scale: scale) }
    return (scale, !fade.isEmpty)
}

/// A linear amplitude as a stored value at `scale`, as `SampleBank.append` makes it.
@inline(__always)
private func quantised(_ x: Float, scale: Float) -> Int16 {
    Int16(max(-32767, min(32767, (x / scale).rounded())))
}

/// The smallest power of two `s` with `peak / s <= 32767` (`SampleBank.powerOfTwoScale`, which
/// BellkeysEngine keeps internal; `SampleLoading` tests compare the two banks value for value).
func powerOfTwoScale(peak: Float) -> Float {
    var scale: Float = 1.0 / 32768.0
    if peak == 0 { return scale }
    while peak / scale > 32767 { scale *= 2 }
    while scale > Float.leastNormalMagnitude, peak / (scale / 2) <= 32767 { scale /= 2 }
    return scale
}
