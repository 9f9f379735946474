// An SFZ file's text as the reader (SFZParser.swift) walks it.

/// A file's text as Unicode scalars, with where its lines start. A UTF-8 BOM is dropped; a byte
/// that is not UTF-8 becomes the Latin-1 character of that value (a comment in another encoding
/// does no harm) and is remembered, so that a header, an opcode or a directive holding one is
/// refused.
struct SFZSourceText {
    let name: String
    let scalars: [Unicode.Scalar]
    let lineStarts: [Int]
    let invalidIndices: [Int]

    init(bytes: [UInt8], name: String) {
        self.name = name
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var scalars: [Unicode.Scalar] = []
        var invalid: [Int] = []
        scalars.reserveCapacity(bytes.count - start)
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes[start...].makeIterator()
        var offset = start
        decoding: while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                scalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<min(offset + length, bytes.count)] {
                    invalid.append(scalars.count)
                    scalars.append(Unicode.Scalar(byte))
                }
                offset += length
            case .emptyInput:
                break decoding
            }
        }
        var starts = [0]
        for (i, c) in scalars.enumerated() {
            if c == "\n" || (c == "\r" && (i + 1 == scalars.count || scalars[i + 1] != "\n")) { starts.append(i + 1) }
        }
        self.scalars = scalars
        self.lineStarts = starts
        self.invalidIndices = invalid
    }

    func location(_ index: Int) -> SFZLocation {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= index { low = middle } else { high = middle - 1 }
        }
        return SFZLocation(file: name, line: low + 1, column: index - lineStarts[low] + 1)
    }

    func text(_ range: Range<Int>) -> String {
        var s = String.UnicodeScalarView()
        s.append(contentsOf: scalars[range])
        return String(s)
    }

    func firstInvalid(in range: Range<Int>) -> Int? {
        var low = 0, high = invalidIndices.count
        while low < high {
            let middle = (low + high) / 2
            if invalidIndices[middle] < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        return low < invalidIndices.count && range.contains(invalidIndices[low]) ? invalidIndices[low] : nil
    }
}
