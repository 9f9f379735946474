// Reading an SFZ file's syntax: comments, headers, opcodes, #define and #include, as sfizz's
// Parser.cpp reads them, but refusing what it would only warn about.

/// A place in an SFZ file (or in a file it includes).
public struct SFZLocation: Sendable, Equatable, CustomStringConvertible {
    /// The file as messages name it: the top file as given to `parseSFZ`, an included file as its
    /// path joined to the top file's folder.
    public var file: String
    /// Line and column, both from 1; columns count characters (Unicode scalars), a tab is one.
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN`.
    public var description: String { "\(file):\(line):\(column)" }
}

/// One header or opcode of an SFZ file, after #define and #include.
struct SFZStatement {
    enum Kind: Equatable {
        case header(String)
        case opcode(name: String, value: String)
    }
    var kind: Kind
    /// The header's `<`, or the opcode's name.
    var location: SFZLocation
    /// The opcode's value (its first character after leading spaces); the `<` for a header.
    var valueLocation: SFZLocation
}

/// An SFZ file's statements in order, with every included file's inline.
struct SFZSyntax {
    var statements: [SFZStatement] = []
    /// Each #include'd path once, as passed to `read`, in the order first included.
    var includedFiles: [String] = []
}

/// How deep #include may nest, how many files it may read, and how long a value may grow
/// through `$NAME` expansions (each bounds the work a hostile file can ask for).
let sfzMaximumIncludeDepth = 16
let sfzMaximumIncludes = 1_000
let sfzMaximumExpandedLength = 8_192

/// Reads the statements of an SFZ file and of the files it includes (through `read`, with the
/// path relative to the top file's folder). Thread: any.
func readSFZStatements(
    _ bytes: [UInt8], file: String, read: (String) throws -> [UInt8]
) throws(InstrumentError) -> SFZSyntax {
    let slash = file.lastIndex(of: "/")
    var reader = SFZStatementReader(
        folder: slash.map { String(file[...$0]) } ?? "",
        includeStack: [slash.map { String(file[file.index(after: $0)...]) } ?? file])
    try reader.parse(SFZSourceText(bytes: bytes, name: file), depth: 0, read: read)
    return reader.syntax
}

func isSFZNameCharacter(_ c: Unicode.Scalar) -> Bool {
    (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_"
}

func isSFZIdentifier(_ s: String) -> Bool { !s.isEmpty && s.unicodeScalars.allSatisfy(isSFZNameCharacter) }

/// A text as messages show it: quoted, cut after 40 characters.
func sfzQuoted(_ s: String) -> String {
    let scalars = s.unicodeScalars
    guard scalars.count > 40 else { return "\"\(s)\"" }
    return "\"\(String(String.UnicodeScalarView(scalars.prefix(40))))...\""
}

private let headerHelp = "write headers as <control>, <global>, <master>, <group>, <region> or <curve>"
private let opcodeHelp =
    "write opcodes as name=value (like lokey=60), headers as <region>, comments after // or inside /* */"

private struct SFZStatementReader {
    let folder: String
    var includeStack: [String]
    var syntax = SFZSyntax()
    var definitions: [String: String] = [:]
    /// The lengths of the defined names, ascending: the only prefixes worth looking up.
    var definedLengths: [Int] = []
    var includeCount = 0

    init(folder: String, includeStack: [String]) {
        self.folder = folder
        self.includeStack = includeStack
    }

    func fail(_ source: SFZSourceText, _ index: Int, _ path: String, _ message: String, fix: String) -> InstrumentError
    {
        let at = source.location(index)
        return InstrumentError([
            InstrumentProblem(file: at.file, line: at.line, column: at.column, path: path, message: message, fix: fix)
        ])
    }

    /// Refuses a range holding a byte that is not UTF-8.
    func requireUTF8(_ source: SFZSourceText, _ range: Range<Int>, _ path: String) throws(InstrumentError) {
        guard let bad = source.firstInvalid(in: range) else { return }
        let byte = String(source.scalars[bad].value, radix: 16, uppercase: true)
        throw fail(source, bad, path, "byte 0x\(byte) is not UTF-8", fix: "save the file as UTF-8")
    }

    mutating func parse(
        _ source: SFZSourceText, depth: Int, read: (String) throws -> [UInt8]
    ) throws(InstrumentError) {
        let s = source.scalars
        var i = 0
        while i < s.count {
            let c = s[i]
            let next: Unicode.Scalar? = i + 1 < s.count ? s[i + 1] : nil
            if c == " " || c == "\t" || c == "\r" || c == "\n" {
                i += 1
            } else if c == "/" && next == "/" {
                while i < s.count && s[i] != "\n" && s[i] != "\r" { i += 1 }
            } else if c == "/" && next == "*" {
                i = try blockCommentEnd(source, i)
            } else if c == "#" {
                i = try directive(source, i, depth: depth, read: read)
            } else if c == "<" {
                i = try header(source, i)
            } else {
                i = try opcode(source, i)
            }
        }
    }

    func blockCommentEnd(_ source: SFZSourceText, _ start: Int) throws(InstrumentError) -> Int {
        let s = source.scalars
        var i = start + 2
        while i + 1 < s.count {
            if s[i] == "*" && s[i + 1] == "/" { return i + 2 }
            i += 1
        }
        throw fail(source, start, "", "this /* comment is never closed", fix: "close it with */")
    }

    mutating func header(_ source: SFZSourceText, _ start: Int) throws(InstrumentError) -> Int {
        let s = source.scalars
        var end = start + 1
        while end < s.count && s[end] != ">" && s[end] != "\n" && s[end] != "\r" { end += 1 }
        let name = source.text(start + 1..<end)
        guard end < s.count, s[end] == ">" else {
            throw fail(source, start, "", "the header <\(name) is not closed with >", fix: headerHelp)
        }
        try requireUTF8(source, start..<end, "")
        guard isSFZIdentifier(name) else {
            throw fail(source, start, "", "<\(name)> is not a header", fix: headerHelp)
        }
        let at = source.location(start)
        syntax.statements.append(SFZStatement(kind: .header(name), location: at, valueLocation: at))
        return end + 1
    }

    mutating func opcode(_ source: SFZSourceText, _ start: Int) throws(InstrumentError) -> Int {
        let s = source.scalars
        var nameEnd = start
        while nameEnd < s.count && (isSFZNameCharacter(s[nameEnd]) || s[nameEnd] == "$") { nameEnd += 1 }
        if nameEnd == start {
            var end = start
            while end < s.count && !" \t\r\n".unicodeScalars.contains(s[end]) { end += 1 }
            throw fail(source, start, "", "\(sfzQuoted(source.text(start..<end))) is not an opcode", fix: opcodeHelp)
        }
        let rawName = source.text(start..<nameEnd)
        guard nameEnd < s.count, s[nameEnd] == "=" else {
            var after = nameEnd
            while after < s.count && (s[after] == " " || s[after] == "\t") { after += 1 }
            if after > nameEnd, after < s.count, s[after] == "=" {
                throw fail(
                    source, nameEnd, rawName, "a space between \(rawName) and =",
                    fix: "write \(rawName)=VALUE, with no space before or after =")
            }
            throw fail(source, start, rawName, "\(rawName) is not followed by =", fix: opcodeHelp)
        }
        try requireUTF8(source, start..<nameEnd, rawName)

        // The value runs to the end of the line or a comment, and stops early (sfizz's
        // processOpcode) at a `<`, or at spaces followed by `<`, #define, #include, `name=` or
        // the end, so `lokey=60 hikey=61` is two opcodes and a path keeps its inner spaces.
        func endsValue(_ k: Int) -> Bool {
            k >= s.count || s[k] == "\n" || s[k] == "\r"
                || (s[k] == "/" && k + 1 < s.count && (s[k + 1] == "/" || s[k + 1] == "*"))
        }
        var end = nameEnd + 1
        while !endsValue(end) && s[end] != "<" {
            var next = end + 1
            if s[end] == " " || s[end] == "\t" {
                while !endsValue(next) && (s[next] == " " || s[next] == "\t") { next += 1 }
                if endsValue(next) || s[next] == "<" { break }
                if s[next] == "#" {
                    var word = next + 1
                    while word < s.count && isSFZNameCharacter(s[word]) { word += 1 }
                    let directive = s[next + 1..<word]
                    if directive.elementsEqual("define".unicodeScalars)
                        || directive.elementsEqual("include".unicodeScalars)
                    {
                        break
                    }
                } else if isSFZNameCharacter(s[next]) || s[next] == "$" {
                    next += 1
                    while next < s.count && (isSFZNameCharacter(s[next]) || s[next] == "$") { next += 1 }
                    if next < s.count && s[next] == "=" { break }
                }
            }
            end = next
        }
        var valueStart = nameEnd + 1
        while valueStart < end && (s[valueStart] == " " || s[valueStart] == "\t") { valueStart += 1 }
        let name = try expand(source, start..<nameEnd, path: rawName)
        guard isSFZIdentifier(name) else {
            throw fail(
                source, start, rawName, "\(sfzQuoted(name)) (from \(rawName)) is not an opcode name",
                fix: "a #define used in an opcode's name must give letters, digits and _ only")
        }
        guard valueStart < end else {
            throw fail(
                source, nameEnd + 1, name, "\(name)= has no value",
                fix: "give a value after = (like \(name)=VALUE), or remove the opcode")
        }
        try requireUTF8(source, valueStart..<end, name)
        let value = try expand(source, valueStart..<end, path: name)
        syntax.statements.append(
            SFZStatement(
                kind: .opcode(name: name, value: value), location: source.location(start),
                valueLocation: source.location(valueStart)))
        return end
    }

    mutating func directive(
        _ source: SFZSourceText, _ start: Int, depth: Int, read: (String) throws -> [UInt8]
    ) throws(InstrumentError) -> Int {
        let s = source.scalars
        var i = start + 1
        while i < s.count && isSFZNameCharacter(s[i]) { i += 1 }
        let word = source.text(start + 1..<i)
        func skipSpaces() { while i < s.count && (s[i] == " " || s[i] == "\t") { i += 1 } }
        switch word {
        case "define":
            skipSpaces()
            let nameStart = i + 1
            var nameEnd = nameStart
            while nameEnd < s.count && isSFZNameCharacter(s[nameEnd]) { nameEnd += 1 }
            guard i < s.count, s[i] == "$", nameEnd > nameStart else {
                throw fail(
                    source, start, "", "#define needs a $NAME",
                    fix: "write #define $NAME value (the name of letters, digits and _)")
            }
            let name = source.text(nameStart..<nameEnd)
            i = nameEnd
            skipSpaces()
            // The value is one word (ARIA, and sfizz): the rest of the line is read on.
            let valueStart = i
            while i < s.count && !" \t\r\n".unicodeScalars.contains(s[i]) {
                if s[i] == "/" && i + 1 < s.count && (s[i + 1] == "/" || s[i + 1] == "*") { break }
                i += 1
            }
            try requireUTF8(source, start..<i, "")
            definitions[name] = try expand(source, valueStart..<i, path: "")
            if !definedLengths.contains(nameEnd - nameStart) {
                definedLengths.append(nameEnd - nameStart)
                definedLengths.sort()
            }
            return i
        case "include":
            skipSpaces()
            let fix = "write #include \"FILE.sfz\", a path relative to the top .sfz file's folder"
            guard i < s.count, s[i] == "\"" else {
                throw fail(source, start, "", "#include needs a file name in double quotes", fix: fix)
            }
            let pathStart = i + 1
            var pathEnd = pathStart
            while pathEnd < s.count && s[pathEnd] != "\"" && s[pathEnd] != "\n" && s[pathEnd] != "\r" { pathEnd += 1 }
            guard pathEnd < s.count, s[pathEnd] == "\"" else {
                throw fail(source, start, "", "the file name after #include is not closed with \"", fix: fix)
            }
            try requireUTF8(source, start..<pathEnd, "")
            var path = try expand(source, pathStart..<pathEnd, path: "")
            path = String(String.UnicodeScalarView(path.unicodeScalars.map { $0 == "\\" ? "/" : $0 }))
            guard !path.isEmpty else { throw fail(source, start, "", "#include \"\" names no file", fix: fix) }
            try include(path, from: source, at: start, depth: depth, read: read)
            return pathEnd + 1
        default:
            throw fail(
                source, start, "", "#\(word) is not a directive",
                fix: "bellkeys reads #define $NAME value and #include \"FILE.sfz\"; comments start with //")
        }
    }

    mutating func include(
        _ path: String, from source: SFZSourceText, at start: Int, depth: Int, read: (String) throws -> [UInt8]
    ) throws(InstrumentError) {
        if includeStack.contains(path) {
            throw fail(
                source, start, "",
                "#include \"\(path)\" includes itself: \((includeStack + [path]).joined(separator: " → "))",
                fix: "remove the #include that closes the circle")
        }
        guard depth < sfzMaximumIncludeDepth else {
            throw fail(
                source, start, "", "#include nests more than \(sfzMaximumIncludeDepth) files deep",
                fix: "include the files from fewer levels")
        }
        includeCount += 1
        guard includeCount <= sfzMaximumIncludes else {
            throw fail(
                source, start, "", "more than \(sfzMaximumIncludes) #include directives",
                fix: "join the included files into fewer")
        }
        let bytes: [UInt8]
        do {
            bytes = try read(path)
        } catch {
            throw fail(
                source, start, "", "cannot read \"\(path)\": \(error)",
                fix: "#include paths are relative to the top .sfz file's folder\(folder.isEmpty ? "" : " (\(folder))")")
        }
        if !syntax.includedFiles.contains(path) { syntax.includedFiles.append(path) }
        includeStack.append(path)
        try parse(
            SFZSourceText(bytes: bytes, name: path.hasPrefix("/") ? path : folder + path), depth: depth + 1, read: read)
        includeStack.removeLast()
    }

    /// The text of `range` with each `$NAME` replaced by its #define. As in ARIA and sfizz, the
    /// name is the shortest run of name characters after `$` that is defined (`$KEYS` is `$KEY`
    /// and `S` when `$KEY` is defined); a `$` before no name character stays. Definitions are
    /// expanded when defined, so the result is not read again.
    func expand(_ source: SFZSourceText, _ range: Range<Int>, path: String) throws(InstrumentError) -> String {
        let s = source.scalars
        guard s[range].contains("$") else { return source.text(range) }
        var out = String.UnicodeScalarView()
        var length = 0
        var i = range.lowerBound
        while i < range.upperBound {
            guard s[i] == "$", i + 1 < range.upperBound, isSFZNameCharacter(s[i + 1]) else {
                out.append(s[i])
                length += 1
                i += 1
                continue
            }
            var runEnd = i + 1
            while runEnd < range.upperBound && isSFZNameCharacter(s[runEnd]) { runEnd += 1 }
            var end = runEnd
            var value: String?
            for nameLength in definedLengths where i + 1 + nameLength <= runEnd {
                value = definitions[source.text(i + 1..<i + 1 + nameLength)]
                if value != nil {
                    end = i + 1 + nameLength
                    break
                }
            }
            guard let value else {
                throw fail(
                    source, i, path, "$\(source.text(i + 1..<end)) is not defined",
                    fix: "define it before its first use: #define $\(source.text(i + 1..<end)) VALUE")
            }
            length += value.unicodeScalars.count
            guard length <= sfzMaximumExpandedLength else {
                throw fail(
                    source, i, path, "#define expansions make this longer than \(sfzMaximumExpandedLength) characters",
                    fix: "use shorter definitions")
            }
            out.append(contentsOf: value.unicodeScalars)
            i = end
        }
        return String(out)
    }
}
