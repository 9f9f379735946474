import BellkeysFormats

/// The rules a settings file's reader keeps for any input: a file read gives options with a
/// name of letters, digits and dashes, values on one line, line numbers in order and within the
/// file, and reads back the same when written out again; a refusal names a line within the
/// file, the problem and the fix, and shows back at most a short piece of the input.
public func settingsFileViolations(_ bytes: [UInt8]) -> [String] {
    var broken: [String] = []
    let lineCount = bytes.count(where: { $0 == 0x0A }) + 1
    do {
        let lines = try parseSettingsFile(bytes, file: "fuzz.conf")
        if bytes.count > settingsFileLimit { broken.append("read \(bytes.count) bytes") }
        var last = 0
        for line in lines {
            if line.line <= last || line.line > lineCount { broken.append("line \(line.line) after \(last)") }
            last = line.line
            let name = line.option.dropFirst(2)
            if !line.option.hasPrefix("--") || name.isEmpty || name.first?.isLetter != true
                || !name.allSatisfy({ ($0.isLetter && $0.isASCII) || $0.isNumber || $0 == "-" })
            {
                broken.append("option \(line.option.debugDescription)")
            }
            if let value = line.value, value.contains(where: \.isNewline) {
                broken.append("value on more than one line: \(value.debugDescription)")
            }
        }
        // Written out again (each value quoted), the file reads the same. (Quotes are looked for
        // among the scalars, as the reader reads them: a quote with a combining mark after it is
        // one Character, and `contains("\"")` would not see it.)
        func has(_ value: String?, _ quote: Unicode.Scalar) -> Bool { (value ?? "").unicodeScalars.contains(quote) }
        let quotable = lines.allSatisfy { !has($0.value, "\"") || !has($0.value, "'") }
        if quotable {
            let text = lines.map { line in
                guard let value = line.value else { return line.option }
                let quote = has(value, "\"") ? "'" : "\""
                return line.option + " " + quote + value + quote
            }.joined(separator: "\n")
            do {
                let again = try parseSettingsFile(Array(text.utf8), file: "again.conf")
                let same =
                    again.map { [$0.option, $0.value ?? "\u{0}"] } == lines.map { [$0.option, $0.value ?? "\u{0}"] }
                if !same { broken.append("written out and read again, the settings differ: \(text.debugDescription)") }
            } catch {
                broken.append("written out, the settings are refused: \(error)")
            }
        }
    } catch {
        if error.line < 0 || error.line > lineCount { broken.append("refusal at line \(error.line) of \(lineCount)") }
        if error.message.isEmpty || error.fix.isEmpty || error.file != "fuzz.conf" {
            broken.append("refusal without its file, problem or fix: \(error)")
        }
        if error.message.count > 400 || error.fix.count > 400 {
            broken.append("refusal shows back too much: \(error.message.count) and \(error.fix.count) characters")
        }
    }
    return broken
}
