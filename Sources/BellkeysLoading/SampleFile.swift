import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import CSampleRate
import CSndFile
import Glibc

/// What was loaded from one sample file.
public struct LoadedSample: Sendable {
    /// Index of the sample in the bank.
    public var index: Int
    /// The file's own rate and channel count (channels are averaged to mono).
    public var fileSampleRate: Int
    public var channelCount: Int
    /// Whether the sample ended abruptly and was given a 2 ms fade.
    public var fadedEnd: Bool
    /// Channels kept in the bank: 1, or 2 for a stereo file loaded with `keepStereo`.
    public var storedChannels = 1
    /// The file's root key (its `smpl` or instrument chunk's base note), if it gives one.
    public var rootKey: Int?
    /// The file's first loop, first and last frame (both played), at the bank's rate, if it has one.
    public var loop: ClosedRange<Int>?
}

/// Decodes a sound file in any format libsndfile reads (WAV, AIFF, FLAC, Ogg Vorbis, ...) into
/// `bank`, at the bank's rate. Multi-channel files are averaged to mono (a stereo file stays
/// stereo with `keepStereo`); other rates are resampled here, once (libsamplerate). 16-bit
/// files at the bank's rate, mono or kept stereo, are read as integers, with no float copy
/// (`decodeSample`); `loadSamples` loads many files on two threads. The file's root key and
/// first loop (WAV `smpl`, AIFF `INST`) come back with it. Thread: control (wraps `sf_open`,
/// `sf_readf_short`, `sf_readf_float`, `SFC_GET_INSTRUMENT`).
///
/// A sample that ends abruptly gets a 2 ms fade at its end (`abruptEndFade`), unless the file
/// has a loop or `mayLoop` says a region loops it: a fade there would be heard at every turn of
/// the loop.
public func loadSample(path: String, into bank: SampleBank, keepStereo: Bool = false, mayLoop: Bool = false)
    throws(SampleError) -> LoadedSample
{
    try decodeSample(path: path, sampleRate: bank.sampleRate, keepStereo: keepStereo, mayLoop: mayLoop)
        .store(into: bank)
}

/// Converts `frames` from one rate to another with libsamplerate's medium sinc converter
/// (97 dB SNR, flat to 90 % of Nyquist: far beyond what bells need; the best converter took
/// 4.3 s for the bundled bank, this one 1 s). Done once at load, never per voice. Thread: control (wraps `src_simple`).
public func resample(_ frames: [Float], from sourceRate: Int, to targetRate: Int) throws(SampleError) -> [Float] {
    if sourceRate == targetRate { return frames }
    let ratio = Double(targetRate) / Double(sourceRate)
    var input = frames
    var output = [Float](repeating: 0, count: Int((Double(frames.count) * ratio).rounded(.up)) + 16)
    var status: Int32 = 0
    var produced = 0
    input.withUnsafeMutableBufferPointer { inp in
        output.withUnsafeMutableBufferPointer { out in
            var data = SRC_DATA()
            data.data_in = UnsafePointer(inp.baseAddress)
            data.input_frames = inp.count
            data.data_out = out.baseAddress
            data.output_frames = out.count
            data.src_ratio = ratio
            status = src_simple(&data, Int32(SRC_SINC_MEDIUM_QUALITY), 1)
            produced = data.output_frames_gen
        }
    }
    guard status == 0 else {
        throw SampleError(
            message: "libsamplerate failed: \(String(cString: src_strerror(status)))",
            fix: "convert the sample to \(targetRate) Hz with a sound editor")
    }
    return Array(output[0..<max(produced, 1)])
}

/// A sample that stops abruptly (last frame louder than -60 dBFS) would click when its voice
/// ends. Returns the gains of a raised-cosine fade over its last 2 ms (at most a quarter of its
/// length), ending at exactly 0; empty for a sample that already ends in silence.
public func abruptEndFade(lastValue: Float, frameCount: Int, sampleRate: Int) -> [Float] {
    guard abs(lastValue) > 0.001 else { return [] }
    let length = max(1, min(sampleRate / 500, frameCount / 4))
    return (0..<length).map { k in
        let x = Double(k + 1) / Double(length)
        return Float(0.5 * (1 + cos(Double.pi * x)))
    }
}

/// Reads a sound file's frames (first channel) as floats, its rate and channel count.
/// Thread: control (tests, tools).
public func readSoundFile(path: String) throws(SampleError) -> (frames: [Float], sampleRate: Int, channels: Int) {
    var info = SF_INFO()
    guard let file = sf_open(path, Int32(SFM_READ), &info) else {
        throw SampleError(message: String(cString: sf_strerror(nil)), fix: "check the file")
    }
    defer { sf_close(file) }
    let channels = Int(info.channels)
    var interleaved = [Float](repeating: 0, count: Int(info.frames) * channels)
    let read = interleaved.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
    let frames = (0..<Int(read)).map { interleaved[$0 * channels] }
    return (frames, Int(info.samplerate), channels)
}
