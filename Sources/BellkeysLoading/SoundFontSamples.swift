import BellkeysFormats
import BellkeysModel
import BellkeysSystem
import CSndFile

/// Stores a 16-bit sample, or a stereo pair interleaved (with their `sm24` low bytes, when the
/// font has them), in the bank. 16-bit words go in as they are; 24-bit ones are kept to 16 bits
/// below their own peak (a pair's, for both sides).
func preparePCM(_ file: OpenSoundFont, _ stored: StoredSample) throws(InstrumentError) -> PreparedSample {
    let font = file.font
    let headers = [stored.header] + (stored.right.map { [$0] } ?? [])
    let first = font.samples[stored.header]
    let frames = first.end - first.start + stored.endOffset
    if font.sampleLowBytes == nil { return try prepareWords(file, headers, frames: frames) }
    var sides: [[Int32]] = []
    var wide = false
    for index in headers {
        let header = font.samples[index]
        guard let words = file.read(offset: font.sampleData.lowerBound + 2 * header.start, length: 2 * frames) else {
            throw InstrumentError([
                InstrumentProblem(
                    file: file.path, line: nil, column: nil, byte: font.sampleData.lowerBound + 2 * header.start,
                    path: "sdta/smpl", message: "cannot read sample \"\(header.name)\"",
                    fix: "the file is cut short: copy or download it again")
            ])
        }
        let low = font.sampleLowBytes.flatMap { file.read(offset: $0.lowerBound + header.start, length: frames) }
        wide = wide || low != nil
        sides.append(
            (0..<frames).map { i in
                let high = Int32(Int16(bitPattern: UInt16(words[2 * i]) | UInt16(words[2 * i + 1]) << 8))
                return low.map { high << 8 | Int32($0[i]) } ?? high << 8
            })
    }
    // The smallest power of two that brings the peak into 15 bits (16-bit words: 8, exact).
    var peak: Int32 = 0
    for side in sides { for v in side { peak = max(peak, abs(v)) } }
    var shift: Int32 = 8
    if wide {
        shift = 0
        while peak >> shift > 32_767 { shift += 1 }
    }
    let scale = Float(1 << shift) / 8_388_608
    let half = shift > 0 ? Int32(1) << (shift - 1) : 0
    return PreparedSample(frameCount: frames, channels: sides.count, scale: scale) { buffer in
        for i in 0..<frames {
            for (c, side) in sides.enumerated() {
                buffer[i * sides.count + c] =
                    wide ? Int16(max(-32_767, min(32_767, (side[i] + half) >> shift))) : Int16(side[i] >> 8)
            }
        }
    }
}
/// Stores 16-bit words as they are (`storePCM` for a font without `sm24`): a mono sample read
/// straight into the bank, a stereo pair's sides read in turn and interleaved. (The words are
/// little-endian, as are the machines bellkeys runs on: amd64 and arm64.)
private func prepareWords(_ file: OpenSoundFont, _ headers: [Int], frames: Int) throws(InstrumentError)
    -> PreparedSample
{
    let font = file.font
    func failure(_ header: SoundFontSample) -> InstrumentError {
        InstrumentError([
            InstrumentProblem(
                file: file.path, line: nil, column: nil, byte: font.sampleData.lowerBound + 2 * header.start,
                path: "sdta/smpl", message: "cannot read sample \"\(header.name)\"",
                fix: "the file is cut short: copy or download it again")
        ])
    }
    return try PreparedSample(frameCount: frames, channels: headers.count, scale: 1.0 / 32_768) {
        (buffer) throws(InstrumentError) in
        if headers.count == 1 {
            let header = font.samples[headers[0]]
            let offset = font.sampleData.lowerBound + 2 * header.start
            guard file.read(into: UnsafeMutableRawBufferPointer(buffer), offset: offset) else { throw failure(header) }
            return
        }
        var side = [Int16](repeating: 0, count: frames)
        for (c, index) in headers.enumerated() {
            let header = font.samples[index]
            let offset = font.sampleData.lowerBound + 2 * header.start
            let read = side.withUnsafeMutableBytes { file.read(into: $0, offset: offset) }
            guard read else { throw failure(header) }
            for i in 0..<frames { buffer[2 * i + c] = side[i] }
        }
    }
}

/// The most frames an SF3 sample may decode to: 10 minutes at 48 kHz (instrument samples last
/// seconds; a damaged stream could otherwise decode to gigabytes).
let maximumDecodedFrames = 600 * 48_000

/// Decodes an SF3 sample (an Ogg Vorbis stream inside `smpl`) through libsndfile and stores it.
func decodeCompressed(_ file: OpenSoundFont, _ header: SoundFontSample, endOffset: Int)
    throws(InstrumentError) -> PreparedSample
{
    let font = file.font
    func failure(_ message: String) -> InstrumentError {
        InstrumentError([
            InstrumentProblem(
                file: file.path, line: nil, column: nil, byte: font.sampleData.lowerBound + header.start,
                path: "sdta/smpl", message: "sample \"\(header.name)\": \(message)",
                fix: "the font is damaged: get it again from where it came")
        ])
    }
    guard let bytes = file.read(offset: font.sampleData.lowerBound + header.start, length: header.end - header.start)
    else { throw failure("cannot read its \(header.end - header.start) bytes") }
    var frames: [Float] = []
    var decodeError: String?
    bytes.withUnsafeBufferPointer { data in
        var memory = bellkeys_memory(data: data.baseAddress, length: sf_count_t(data.count), position: 0)
        var info = SF_INFO()
        guard let sound = bellkeys_open_memory(&memory, &info) else {
            decodeError = "not an Ogg Vorbis stream libsndfile reads (\(String(cString: sf_strerror(nil))))"
            return
        }
        defer { sf_close(sound) }
        guard info.channels == 1 else {
            decodeError = "\(info.channels) channels: a SoundFont sample is mono"
            return
        }
        // Read in pieces, not by the length the stream claims (a damaged stream may claim any).
        var piece = [Float](repeating: 0, count: 65_536)
        while frames.count <= maximumDecodedFrames {
            let got = piece.withUnsafeMutableBufferPointer { sf_readf_float(sound, $0.baseAddress, 65_536) }
            if got <= 0 { break }
            frames += piece[0..<Int(got)]
        }
        if frames.isEmpty { decodeError = "it decodes to no frames" }
        if frames.count > maximumDecodedFrames {
            decodeError = "it decodes to more than \(maximumDecodedFrames) frames (10 minutes at 48 kHz)"
        }
    }
    if let decodeError { throw failure(decodeError) }
    // The zone's end offset, in frames of the decoded sample (at least 2 frames kept).
    frames.removeLast(min(-endOffset, max(0, frames.count - 2)))
    for x in frames where !x.isFinite { throw failure("it decodes to values that are not numbers") }
    return PreparedSample(interleaved: frames, channels: 1)
}
