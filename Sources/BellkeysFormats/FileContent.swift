/// What a file's first bytes show it to be, for the messages that refuse a file given where
/// another kind belongs (a MIDI file to `render`, anything to `--map`): one reading of the
/// magic numbers for every reader. Thread: any.
public enum FileContent: Equatable, Sendable {
    /// A Standard MIDI File ("MThd"), or one in RIFF (RMID).
    case midi
    /// A SoundFont (RIFF sfbk).
    case soundFont
    /// A sound, named by its kind: WAV, FLAC, Ogg, AIFF or MP3.
    case sound(String)
    /// Another RIFF file, named by its form type.
    case otherRIFF(String)
    /// JSON: its first character, past spaces and a byte-order mark, is `{`.
    case json
    /// Text, with its first line.
    case text(firstLine: String)
    /// Anything else, with its first bytes in hexadecimal.
    case binary(firstBytes: String)

    public init(_ bytes: [UInt8]) {
        func starts(_ text: String) -> Bool { bytes.starts(with: Array(text.utf8)) }
        if starts("MThd") {
            self = .midi
            return
        }
        if starts("RIFF"), bytes.count >= 12 {
            let form = String(decoding: bytes[8..<12], as: UTF8.self)
            switch form {
            case "WAVE": self = .sound("WAV")
            case "sfbk": self = .soundFont
            case "RMID": self = .midi
            default: self = .otherRIFF(form)
            }
            return
        }
        for (magic, kind) in [("fLaC", "FLAC"), ("OggS", "Ogg"), ("FORM", "AIFF"), ("ID3", "MP3")] where starts(magic) {
            self = .sound(kind)
            return
        }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if first == UInt8(ascii: "{") {
            self = .json
            return
        }
        let head = bytes.prefix(200)
        if head.allSatisfy({ $0 == 9 || $0 == 10 || $0 == 13 || ($0 >= 32 && $0 != 127) }) {
            self = .text(firstLine: String(decoding: head.prefix { $0 != 10 && $0 != 13 }, as: UTF8.self))
            return
        }
        self = .binary(
            firstBytes: head.prefix(4).map { byte in
                let digits = String(byte, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }.joined(separator: " "))
    }

    /// What it is, as a refusal says it: "it is a sound (WAV)", "it is text ("...")".
    public var description: String {
        switch self {
        case .midi: "it is a MIDI file"
        case .soundFont: "it is a SoundFont"
        case .sound(let kind): "it is a sound (\(kind))"
        case .otherRIFF(let form): "it is a RIFF \(form) file"
        case .json: "it is JSON (a map?)"
        case .text(let line): "it is text (\"\(line.count > 40 ? String(line.prefix(40)) + "..." : line)\")"
        case .binary(let first): "it starts with the bytes \(first)"
        }
    }
}
