/// A parsed JSON value that remembers where in the text it stood, so that errors can point
/// at it. Strict RFC 8259 JSON: no comments, no trailing commas, unique object keys.
public struct JSONNode: Sendable {
    public enum Value: Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONNode])
        /// Members in file order.
        case object([(key: String, value: JSONNode)])
    }

    public var value: Value
    /// 1-based position of the value's first character.
    public var line: Int
    public var column: Int

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A syntax error at a position in the text.
public struct JSONSyntaxError: Error, Sendable {
    public var line: Int
    public var column: Int
    public var message: String
}

/// Parses JSON text (UTF-8). Nesting deeper than `maxDepth` is refused, so hostile input
/// cannot exhaust the stack.
public func parseJSON(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONSyntaxError) -> JSONNode {
    var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
    var start = 0
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 } // UTF-8 byte order mark
    parser.index = start
    parser.skipWhitespace()
    let node = try parser.parseValue(depth: 0)
    parser.skipWhitespace()
    if parser.index < bytes.count {
        throw parser.error("unexpected text after the JSON value")
    }
    return node
}

private struct JSONParser {
    let bytes: [UInt8]
    let maxDepth: Int
    var index = 0
    var line = 1
    var lineStart = 0

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    var column: Int { index - lineStart + 1 }

    func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(line: line, column: column, message: message)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let c = current {
            if c == 0x0A {
                line += 1
                lineStart = index + 1
            } else if c != 0x20 && c != 0x09 && c != 0x0D {
                return
            }
            index += 1
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
        guard current == byte else {
            throw error(current == nil ? "the file ends where \(what) was expected" : "expected \(what)")
        }
        index += 1
    }

    mutating func parseValue(depth: Int) throws(JSONSyntaxError) -> JSONNode {
        let (l, c) = (line, column)
        guard let byte = current else { throw error("the file ends where a value was expected") }
        func node(_ v: JSONNode.Value) -> JSONNode { JSONNode(value: v, line: l, column: c) }
        switch byte {
        case UInt8(ascii: "{"):
            if depth >= maxDepth { throw error("nesting deeper than \(maxDepth) levels") }
            index += 1
            var members: [(key: String, value: JSONNode)] = []
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return node(.object(members))
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else {
                    throw error(current == nil ? "the file ends inside an object" : "expected a quoted member name")
                }
                let (kl, kc) = (line, column)
                let key = try parseString()
                if members.contains(where: { $0.key == key }) {
                    throw JSONSyntaxError(
                        line: kl, column: kc, message: "member \"\(key)\" appears twice in one object")
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':' after the member name")
                skipWhitespace()
                members.append((key, try parseValue(depth: depth + 1)))
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    if current == UInt8(ascii: "}") { throw error("trailing comma before '}'") }
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}' after an object member")
                return node(.object(members))
            }
        case UInt8(ascii: "["):
            if depth >= maxDepth { throw error("nesting deeper than \(maxDepth) levels") }
            index += 1
            var elements: [JSONNode] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return node(.array(elements))
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                if current == UInt8(ascii: ",") {
                    index += 1
                    skipWhitespace()
                    if current == UInt8(ascii: "]") { throw error("trailing comma before ']'") }
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']' after an array element")
                return node(.array(elements))
            }
        case UInt8(ascii: "\""):
            return node(.string(try parseString()))
        case UInt8(ascii: "t"):
            try literal("true")
            return node(.bool(true))
        case UInt8(ascii: "f"):
            try literal("false")
            return node(.bool(false))
        case UInt8(ascii: "n"):
            try literal("null")
            return node(.null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return node(.number(try parseNumber()))
        default:
            throw error("expected a value (object, array, string, number, true, false or null)")
        }
    }

    mutating func literal(_ word: String) throws(JSONSyntaxError) {
        let start = column
        for b in word.utf8 {
            guard current == b else {
                throw JSONSyntaxError(line: line, column: start, message: "expected '\(word)'")
            }
            index += 1
        }
    }

    mutating func parseNumber() throws(JSONSyntaxError) -> Double {
        let start = index
        func digits() -> Int {
            var n = 0
            while let c = current, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") {
                index += 1
                n += 1
            }
            return n
        }
        if current == UInt8(ascii: "-") { index += 1 }
        if current == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            throw error("expected digits in a number")
        }
        if current == UInt8(ascii: ".") {
            index += 1
            if digits() == 0 { throw error("expected digits after '.' in a number") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            if digits() == 0 { throw error("expected digits in a number's exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONSyntaxError(line: line, column: start - lineStart + 1, message: "number \(text) is out of range")
        }
        return value
    }

    mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1 // opening quote
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            if !raw.isEmpty {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll(keepingCapacity: true)
            }
        }
        while true {
            guard let c = current else { throw error("the file ends inside a string") }
            switch c {
            case UInt8(ascii: "\""):
                index += 1
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                index += 1
                guard let e = current else { throw error("the file ends inside a string") }
                index += 1
                switch e {
                case UInt8(ascii: "\""): raw.append(0x22)
                case UInt8(ascii: "\\"): raw.append(0x5C)
                case UInt8(ascii: "/"): raw.append(0x2F)
                case UInt8(ascii: "b"): raw.append(0x08)
                case UInt8(ascii: "f"): raw.append(0x0C)
                case UInt8(ascii: "n"): raw.append(0x0A)
                case UInt8(ascii: "r"): raw.append(0x0D)
                case UInt8(ascii: "t"): raw.append(0x09)
                case UInt8(ascii: "u"):
                    flush()
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
                            bytes[index + 1] == UInt8(ascii: "u")
                        else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else {
                            throw error("unpaired UTF-16 surrogate in \\u escape")
                        }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(scalar)
                default:
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))' in a string")
                }
            case 0x00..<0x20:
                throw error("control character (newline or tab) inside a string; write it as \\n or \\t")
            default:
                raw.append(c)
                index += 1
            }
        }
    }

    mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let c = current else { throw error("the file ends inside a \\u escape") }
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error("expected four hex digits after \\u")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }
}
