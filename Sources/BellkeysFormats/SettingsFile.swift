/// One setting of a settings file: an option as typed on the command line, and its value.
public struct SettingsLine: Sendable, Equatable {
    /// Line number, from 1.
    public var line: Int
    /// The option's long name with its dashes: `--device`.
    public var option: String
    /// The value (quotes taken off), or nil for a flag.
    public var value: String?

    public init(line: Int, option: String, value: String?) {
        self.line = line
        self.option = option
        self.value = value
    }

    /// The argument the line stands for: `--device=hw:1` (one word, so that a value that starts
    /// with a dash is read as a value), or the flag.
    public var arguments: [String] { [value.map { option + "=" + $0 } ?? option] }

    /// The line as it reads in a report: `--device hw:1`.
    public var text: String { option + (value.map { " " + $0 } ?? "") }
}

/// A settings file that cannot be read: the file, the line (0: the whole file), what is wrong
/// and the fix.
public struct SettingsFileError: Error, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var message: String
    public var fix: String

    public init(file: String, line: Int, message: String, fix: String) {
        self.file = file
        self.line = line
        self.message = message
        self.fix = fix
    }

    /// (An error that names lines of two files gives them in its message, and no file.)
    public var description: String {
        (line > 0 ? "\(file) line \(line): " : file.isEmpty ? "" : "\(file): ") + message + "\n    fix: " + fix
    }
}

/// The largest settings file read (a settings file is a few lines; anything larger is not one).
public let settingsFileLimit = 64 * 1024

/// Reads a settings file: one option per line as typed on the command line (`--device hw:1`,
/// `--no-ui`, or `--device=hw:1`, spaces allowed around the =), blank lines and comments (`#` to the end of the line, at its
/// start or after a space) skipped. A value is the rest of the line, spaces inside it kept; one
/// pair of quotes around it ("..." or '...') is taken off, and inside them `#` is not a comment.
/// It does not know the options: the command's parser judges them. Thread: any.
public func parseSettingsFile(_ bytes: [UInt8], file: String) throws(SettingsFileError) -> [SettingsLine] {
    let text = try settingsText(bytes, file: file)
    var settings: [SettingsLine] = []
    // Read as Unicode scalars, not characters: a quote followed by a combining mark is one
    // Character, and must still open a value.
    for (index, raw) in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        if let setting = try settingsLine(Array(raw), number: index + 1, file: file) { settings.append(setting) }
    }
    return settings
}

/// A settings file's bytes as text: refused when too large, holding a NUL or not UTF-8.
private func settingsText(_ bytes: [UInt8], file: String) throws(SettingsFileError) -> String {
    if bytes.count > settingsFileLimit {
        throw SettingsFileError(
            file: file, line: 0, message: "is \(bytes.count) bytes, too large for a settings file",
            fix: "a settings file holds options, one per line (--device hw:1); check that this is the file meant")
    }
    if let nul = bytes.firstIndex(of: 0) {
        throw SettingsFileError(
            file: file, line: bytes[..<nul].count(where: { $0 == 0x0A }) + 1,
            message: "holds a NUL byte: this is not a text file",
            fix: "a settings file is text, one option per line (--device hw:1)")
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
        var line = 1, start = 0
        for (i, byte) in bytes.enumerated() where byte == 0x0A {
            if String(validating: bytes[start..<i], as: UTF8.self) == nil { break }
            line += 1
            start = i + 1
        }
        throw SettingsFileError(
            file: file, line: line, message: "is not UTF-8 text",
            fix: "save the file as UTF-8 (a text editor's default)")
    }
    return text
}

/// Line `number` of a settings file (`raw`, without its newline): the option and value it sets,
/// or nil for a blank line or a comment.
private func settingsLine(_ raw: [Unicode.Scalar], number: Int, file: String) throws(SettingsFileError)
    -> SettingsLine?
{
    var line = raw
    if line.last == "\r" { line.removeLast() }
    line = trimmed(line[...])
    if line.isEmpty || line[0] == "#" { return nil }
    // A control character (a form feed, a lone CR) or a line separator inside a line: not
    // a setting anyone typed.
    if let odd = line.first(where: {
        ($0.properties.generalCategory == .control && $0 != "\t")
            || $0.properties.generalCategory == .lineSeparator
            || $0.properties.generalCategory == .paragraphSeparator
    }) {
        let code = String(odd.value, radix: 16, uppercase: true)
        throw SettingsFileError(
            file: file, line: number,
            message:
                "holds the control character U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code)",
            fix: "delete it: a setting is an option and its value, in plain text on one line")
    }
    guard line.count > 2, line[0] == "-", line[1] == "-" else {
        let word = line.prefix { !$0.properties.isWhitespace }
        let looksLikeOption =
            word.first?.properties.isAlphabetic == true
            && word.allSatisfy { $0.properties.isAlphabetic || $0 == "-" }
        let example = looksLikeOption ? "--\(string(of: line.prefix(60)))" : "--device hw:1"
        throw SettingsFileError(
            file: file, line: number, message: "\"\(string(of: line.prefix(60)))\" is not an option",
            fix:
                "write each setting as an option of `bellkeys play --help`, as typed on the command line: \(example)"
        )
    }
    let nameEnd = line.firstIndex { $0.properties.isWhitespace || $0 == "=" } ?? line.endIndex
    let name = line[2..<nameEnd]
    let option = string(of: line[..<nameEnd])
    guard let first = name.first, first.isASCII, first.properties.isAlphabetic,
        name.allSatisfy({
            $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-")
        })
    else {
        throw SettingsFileError(
            file: file, line: number,
            message: "\"\(string(of: line[..<nameEnd].prefix(60)))\" is not an option's name",
            fix: "an option is two dashes and its name, as `bellkeys play --help` lists them: --device")
    }
    let shown = nameEnd > 60 ? string(of: line.prefix(60)) + "…" : option
    // (An = may have spaces around it: `--device = hw:1`, as other settings files write it.)
    var rest = trimmed(line[nameEnd...])[...]
    let equals = rest.first == "="
    if equals { rest.removeFirst() }
    var value = trimmed(rest)[...]
    let quote = value.first.flatMap { $0 == "\"" || $0 == "'" ? $0 : nil }
    if let quote {
        let inside = value.dropFirst()
        guard let close = inside.firstIndex(of: quote) else {
            throw SettingsFileError(
                file: file, line: number,
                message: "the value of \(shown) opens a quote (\(quote)) it never closes",
                fix:
                    "close the quote at the end of the value: \(shown) \(quote)\(string(of: inside.prefix(60)))\(quote)"
            )
        }
        let after = trimmed(value[(close + 1)...])
        guard after.isEmpty || after[0] == "#" else {
            throw SettingsFileError(
                file: file, line: number,
                message: "\"\(string(of: after.prefix(40)))\" follows the quoted value of \(shown)",
                fix: "one value per line: put the whole value inside the quotes, or start a comment with #")
        }
        value = inside[..<close]
    } else if let hash = value.indices.first(where: {
        value[$0] == "#" && ($0 == value.startIndex || value[$0 - 1].properties.isWhitespace)
    }) {
        value = trimmed(value[..<hash])[...]
    }
    if equals, value.isEmpty {
        throw SettingsFileError(
            file: file, line: number, message: "\(shown)= gives no value",
            fix: "give the value after the = (\(shown)=VALUE), or leave the line out")
    }
    return SettingsLine(
        line: number, option: option, value: value.isEmpty && !equals && quote == nil ? nil : string(of: value))
}

/// `scalars` without spaces and tabs at either end.
private func trimmed(_ scalars: ArraySlice<Unicode.Scalar>) -> [Unicode.Scalar] {
    var s = scalars
    while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
    while let c = s.last, c == " " || c == "\t" { s.removeLast() }
    return Array(s)
}

/// The text of `scalars`.
private func string(of scalars: some Sequence<Unicode.Scalar>) -> String {
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars)
    return String(view)
}
