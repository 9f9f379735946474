/// Note names in scientific pitch notation: C4 is MIDI note 60 (middle C), C-1 is 0, G9 is 127.

private let pitchClasses: [Character: Int] = ["C": 0, "D": 2, "E": 4, "F": 5, "G": 7, "A": 9, "B": 11]
private let sharpNames = ["C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B"]

/// The MIDI note number of a name like `C4`, `c#4`, `Db4`, `F♯3` or `C-1`; nil if it is not one.
public func midiNote(named name: String) -> Int? {
    var chars = Substring(name.trimmingWhitespace())
    guard let letter = chars.first.map({ Character($0.uppercased()) }),
        let pitchClass = pitchClasses[letter]
    else { return nil }
    chars = chars.dropFirst()
    var accidental = 0
    while let c = chars.first, c == "#" || c == "b" || c == "♯" || c == "♭" {
        accidental += (c == "#" || c == "♯") ? 1 : -1
        chars = chars.dropFirst()
    }
    guard !chars.isEmpty, let octave = Int(chars), (-1...9).contains(octave) else { return nil }
    let note = (octave + 1) * 12 + pitchClass + accidental
    return (0...127).contains(note) ? note : nil
}

/// The name of a MIDI note with sharps, like `C#4`.
public func noteName(_ note: Int) -> String {
    "\(sharpNames[((note % 12) + 12) % 12])\(note / 12 - 1)"
}

/// Button tags of the original tutorial: 100 is C4, 112 is C5.
public let tagRange = 100...112

/// The MIDI note of a tutorial button tag, or nil outside 100...112.
public func midiNote(tag: Int) -> Int? { tagRange.contains(tag) ? tag - 100 + 60 : nil }

extension String {
    func trimmingWhitespace() -> Substring {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s = s.dropFirst() }
        while let c = s.last, c.isWhitespace { s = s.dropLast() }
        return s
    }
}
