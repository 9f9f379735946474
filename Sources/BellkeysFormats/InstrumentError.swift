// The one error of every instrument format: a map (JSON), an SFZ file, a SoundFont, a map of
// sets, and the samples they name.

/// One problem in an instrument's files, pointing at what causes it: the file, and in it the
/// line and column (a map, an SFZ file) or the byte (a SoundFont), and the value's path (a JSON
/// path like `keys[2].sample`, an SFZ opcode, a SoundFont's chunk like `pdta/shdr`); what is
/// wrong, and how to fix it. Thread: any.
public struct InstrumentProblem: Error, Sendable, CustomStringConvertible {
    /// The file as the user named it (or as the file naming it gave it).
    public var file: String
    /// Position of the offending value in a text file (nil when the problem is the file as a whole).
    public var line: Int?
    public var column: Int?
    /// Position of the offending bytes in a binary file (a SoundFont), from its start.
    public var byte: Int?
    /// Where the offending value is inside the file: a JSON path, an opcode or a chunk.
    public var path: String
    /// What is wrong, naming the value.
    public var message: String
    /// How to fix it.
    public var fix: String

    public init(
        file: String, line: Int?, column: Int?, byte: Int? = nil, path: String, message: String, fix: String
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.byte = byte
        self.path = path
        self.message = message
        self.fix = fix
    }

    /// "FILE:LINE:COLUMN: PATH: MESSAGE" (or "FILE: PATH: at byte N: MESSAGE"), then the fix.
    public var description: String {
        var place = file
        if let line, let column { place += ":\(line):\(column)" }
        let at = byte.map { "at byte \($0): " } ?? ""
        return "\(place): \(path.isEmpty ? "" : path + ": ")\(at)\(message)\n    fix: \(fix)"
    }
}

/// Every problem found in an instrument's files (at least one). Thread: any.
public struct InstrumentError: Error, Sendable, CustomStringConvertible {
    public var problems: [InstrumentProblem]
    public init(_ problems: [InstrumentProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
