import BellkeysEngine
import BellkeysFormats
import BellkeysSystem
import CSndFile
import Glibc

// Sound files written (libsndfile): WAV, FLAC and the others a render or a recording makes.

extension OutputSampleFormat {
    var sndfileSubtype: Int32 {
        switch self {
        case .s16: Int32(SF_FORMAT_PCM_16)
        case .s24: Int32(SF_FORMAT_PCM_24)
        case .s32: Int32(SF_FORMAT_PCM_32)
        case .f32: Int32(SF_FORMAT_FLOAT)
        }
    }
}

/// Creates a WAV file for writing (no PEAK chunk); errors name `reportedAs`.
func createWAV(
    at path: String, reportedAs name: String, operation: String, sampleRate: Int, channelCount: Int,
    format: OutputSampleFormat
) throws(FileError) -> OpaquePointer {
    var info = SF_INFO()
    info.samplerate = Int32(sampleRate)
    info.channels = Int32(channelCount)
    info.format = Int32(SF_FORMAT_WAV) | format.sndfileSubtype
    guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
        throw FileError(
            path: name, operation: operation, message: String(cString: sf_strerror(nil)),
            fix: "check that the folder exists and is writable")
    }
    sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
    return file
}

/// The installed libsndfile's name and version ("libsndfile-1.2.0"). Thread: any.
public var sndfileVersion: String { String(cString: sf_version_string()) }

/// The kinds of sound file `render -o` and `demo -o` write, chosen by the file's extension.
/// Thread: any.
public enum OutputFileKind: String, CaseIterable, Sendable {
    case wav, flac, ogg, mp3

    /// The kind an output path's extension names (case-insensitive; `.oga` is Ogg), or nil.
    public init?(path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        let ext = path[path.index(after: dot)...].lowercased()
        switch ext {
        case "wav": self = .wav
        case "flac": self = .flac
        case "ogg", "oga": self = .ogg
        case "mp3": self = .mp3
        default: return nil
        }
    }

    /// The name a user knows the kind by.
    public var displayName: String {
        switch self {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .ogg: "Ogg Vorbis"
        case .mp3: "MP3"
        }
    }

    /// Whether samples are stored as they are (a sample format applies) rather than encoded lossily.
    public var isLossless: Bool { self == .wav || self == .flac }

    /// The sample formats the kind holds (none for lossy kinds, which encode floats).
    public var sampleFormats: [OutputSampleFormat] {
        switch self {
        case .wav: [.s16, .s24, .s32, .f32]
        case .flac: [.s16, .s24]
        case .ogg, .mp3: []
        }
    }

    /// libsndfile's format word for this kind at `format`.
    func sndfileFormat(_ format: OutputSampleFormat) -> Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV) | format.sndfileSubtype
        case .flac: Int32(SF_FORMAT_FLAC) | format.sndfileSubtype
        case .ogg: Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_VORBIS)
        case .mp3: Int32(BELLKEYS_SF_FORMAT_MPEG) | Int32(BELLKEYS_SF_FORMAT_MPEG_LAYER_III)
        }
    }

    /// Whether the installed libsndfile was built with this kind (its list of major formats
    /// names it: Ogg and MP3 are optional there). Thread: any (wraps `sf_command`).
    public var isBuiltIn: Bool {
        let major = sndfileFormat(sampleFormats.first ?? .f32) & Int32(SF_FORMAT_TYPEMASK)
        var count: Int32 = 0
        sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        for index in 0..<count {
            var info = SF_FORMAT_INFO()
            info.format = index
            sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            if info.format == major { return true }
        }
        return false
    }

    /// Whether the installed libsndfile writes this kind at `channelCount` channels (and
    /// `sampleRate`, 48 kHz unless the caller knows better). Thread: any (wraps
    /// `sf_format_check`).
    public func isWritable(sampleRate: Int = 48_000, channelCount: Int) -> Bool {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channelCount)
        info.format = sndfileFormat(sampleFormats.first ?? .f32)
        return isBuiltIn && sf_format_check(&info) != 0
    }

    /// The channels a file of this kind holds at most (MP3: 2).
    public var maximumChannels: Int { self == .mp3 ? 2 : 8 }
}

/// Writes engine output to a sound file (WAV, FLAC, Ogg Vorbis or MP3: `kind`): a mono mix
/// copied to every channel (`write(_:)`), or a left and a right channel (`write(left:right:)`).
/// The file is written under a temporary name and moved into place by `finish`, so a failed
/// render never destroys an existing file. Output is deterministic (no PEAK chunk with a
/// timestamp). Thread: control (wraps `sf_open`, `sf_writef_float`).
public final class SoundFileWriter {
    public let path: String
    let partialPath: String
    let channelCount: Int
    /// The samples handed to libsndfile: the file's own for WAV and FLAC, floats for the lossy kinds.
    let format: OutputSampleFormat
    public let kind: OutputFileKind
    var file: OpaquePointer?
    /// Interleaved frames for libsndfile: floats for `f32`, 16-bit values for `s16`, 32-bit
    /// values for `s24` and `s32` (libsndfile keeps the top 24 bits for `s24`).
    var floats = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)
    var shorts = UnsafeMutableBufferPointer<Int16>(start: nil, count: 0)
    var ints = UnsafeMutableBufferPointer<Int32>(start: nil, count: 0)

    /// `format` must be one of `kind.sampleFormats` (any, for a lossy kind: it encodes floats).
    public init(
        path: String, sampleRate: Int, channelCount: Int, format: OutputSampleFormat, kind: OutputFileKind = .wav
    ) throws(FileError) {
        precondition(kind.sampleFormats.isEmpty || kind.sampleFormats.contains(format))
        self.path = path
        self.channelCount = channelCount
        self.format = kind.isLossless ? format : .f32
        self.kind = kind
        partialPath = path + ".partial"
        let file: OpaquePointer
        if kind == .wav {
            file = try createWAV(
                at: partialPath, reportedAs: path, operation: "create the WAV file",
                sampleRate: sampleRate, channelCount: channelCount, format: format)
        } else {
            var info = SF_INFO()
            info.samplerate = Int32(sampleRate)
            info.channels = Int32(channelCount)
            info.format = kind.sndfileFormat(format)
            guard let opened = sf_open(partialPath, Int32(SFM_WRITE), &info) else {
                let message = String(cString: sf_strerror(nil))
                let folder = directoryName(partialPath)
                throw FileError(
                    path: path,
                    operation: "create the \(kind.displayName) file at \(sampleRate) Hz, \(channelCount) channels",
                    message: message,
                    fix: isFolder(folder)
                        ? (kind == .mp3
                            ? "MP3 holds 8000 to 48000 Hz: render at one of them (--rate 48000), or write a .wav or .flac file"
                            : "write a .wav or .flac file, or choose another --rate")
                        : "check that the folder exists and is writable")
            }
            file = opened
        }
        self.file = file
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
    }

    deinit {
        if let file {
            sf_close(file)
            unlink(partialPath)
        }
        floats.deallocate()
        shorts.deallocate()
        ints.deallocate()
    }

    /// Appends mono frames, copied to every channel.
    public func write(_ mono: UnsafeBufferPointer<Float>) throws(FileError) {
        let channels = channelCount
        try write(frameCount: mono.count) { format, output in
            interleave(mono.baseAddress!, frameCount: mono.count, channels: channels, format: format, into: output)
        }
    }

    /// Appends frames of a left and a right channel: the first channel gets the left, the
    /// second the right, any others (or a mono file) their average (see `interleave`).
    public func write(left: UnsafeBufferPointer<Float>, right: UnsafeBufferPointer<Float>) throws(FileError) {
        precondition(left.count == right.count)
        let channels = channelCount
        try write(frameCount: left.count) { format, output in
            interleave(
                left: left.baseAddress!, right: right.baseAddress!, frameCount: left.count, channels: channels,
                format: format, into: output)
        }
    }

    /// Converts `n` frames with `convert` (into the buffer of the file's sample type) and writes them.
    private func write(frameCount n: Int, convert: (OutputSampleFormat, UnsafeMutableRawPointer) -> Void)
        throws(FileError)
    {
        let channels = channelCount
        let written: sf_count_t
        if format == .s16 {
            if shorts.count < n * channels {
                shorts.deallocate()
                shorts = .allocate(capacity: n * channels)
            }
            convert(.s16, UnsafeMutableRawPointer(shorts.baseAddress!))
            written = sf_writef_short(file, shorts.baseAddress, sf_count_t(n))
        } else if format == .s24 || format == .s32 {
            if ints.count < n * channels {
                ints.deallocate()
                ints = .allocate(capacity: n * channels)
            }
            convert(format, UnsafeMutableRawPointer(ints.baseAddress!))
            written = sf_writef_int(file, ints.baseAddress, sf_count_t(n))
        } else {
            if floats.count < n * channels {
                floats.deallocate()
                floats = .allocate(capacity: n * channels)
            }
            convert(.f32, UnsafeMutableRawPointer(floats.baseAddress!))
            written = sf_writef_float(file, floats.baseAddress, sf_count_t(n))
        }
        guard written == n else {
            throw FileError(
                path: path, operation: "write the \(kind.displayName) file",
                message: String(cString: sf_strerror(file)),
                fix: "check the free space on the disk")
        }
    }

    /// Closes the file and moves it into place.
    public func finish() throws(FileError) {
        guard let file else { return }
        self.file = nil
        let status = sf_close(file)
        guard status == 0, rename(partialPath, path) == 0 else {
            let message = status != 0 ? String(cString: sf_error_number(status)) : errnoMessage(errno)
            unlink(partialPath)
            throw FileError(
                path: path, operation: "finish the \(kind.displayName) file", message: message,
                fix: "check the free space and permissions of the folder")
        }
    }
}
