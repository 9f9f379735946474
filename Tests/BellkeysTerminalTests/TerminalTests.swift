import BellkeysTerminal
import Testing

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite struct TerminalInputDecoding {
    @Test func legacyKeysAndSequences() {
        var p = TerminalInputParser()
        #expect(
            p.feed(bytes("aW \r\u{7F}\u{03}\u{1B}[A\u{1B}OB-")) == [
                .key(.character("a"), .press), .key(.character("W"), .press), .key(.character(" "), .press),
                .key(.enter, .press), .key(.backspace, .press), .key(.control("c"), .press),
                .key(.up, .press), .key(.down, .press), .key(.character("-"), .press),
            ])
        #expect(!p.hasPending)
    }

    @Test func kittyEventTypes() {
        var p = TerminalInputParser()
        // a press, repeat, release; shift+a; Esc; Enter release; Ctrl-C; Up release; space.
        #expect(
            p.feed(
                bytes(
                    "\u{1B}[97u\u{1B}[97;1:2u\u{1B}[97;1:3u\u{1B}[97;2u\u{1B}[27u\u{1B}[13;1:3u\u{1B}[99;5u\u{1B}[1;1:3A\u{1B}[32u"
                )) == [
                    .key(.character("a"), .press), .key(.character("a"), .repeat), .key(.character("a"), .release),
                    .key(.character("a"), .press), .key(.escape, .press), .key(.enter, .release),
                    .key(.control("c"), .press), .key(.up, .release), .key(.character(" "), .press),
                ])
    }

    @Test func queryAnswers() {
        var p = TerminalInputParser()
        #expect(p.feed(bytes("\u{1B}[?0u\u{1B}[?62;22c")) == [.kittyKeyboardFlags(0), .deviceAttributes])
        #expect(p.feed(bytes("\u{1B}[?1;2c")) == [.deviceAttributes])
    }

    @Test func sequencesSplitAcrossReadsAndALoneEscape() {
        var p = TerminalInputParser()
        #expect(p.feed(bytes("\u{1B}")) == [])
        #expect(p.hasPending)
        #expect(p.feed(bytes("[9")) == [])
        #expect(p.feed(bytes("7;1:3u")) == [.key(.character("a"), .release)])
        #expect(p.feed(bytes("\u{1B}")) == [])
        #expect(p.flush() == [.key(.escape, .press)])
        #expect(!p.hasPending)
        // Unused sequences (F5, Home) and UTF-8 text are skipped whole.
        #expect(p.feed(bytes("\u{1B}[15~\u{1B}[Hé€s")) == [.key(.character("s"), .press)])
    }
}

@Suite struct ComputerKeyboard {
    @Test func layoutIsAPianoOctaveFromC4() {
        let k = TerminalKeyboard()
        let notes = "awsedftgyhujk".map { k.note(for: .character($0)) }
        #expect(notes == Array(60...72).map { Optional($0) })
        #expect(k.note(for: .character("K")) == 72)
        #expect(k.note(for: .character("q")) == nil)
    }

    @Test func withReleasesAKeyHoldsItsNoteAndRepeatsAreIgnored() {
        var k = TerminalKeyboard()
        k.reportsReleases = true
        #expect(k.handle(.character("a"), .press, seconds: 0) == [.noteOn(note: 60)])
        #expect(k.handle(.character("a"), .repeat, seconds: 0.5) == [])
        #expect(k.handle(.character("a"), .press, seconds: 0.6) == [])
        #expect(k.handle(.character("a"), .release, seconds: 0.7) == [.noteOff(note: 60)])
        #expect(k.handle(.character("a"), .release, seconds: 0.8) == [])
        #expect(k.handle(.character(" "), .press, seconds: 1) == [.pedal(down: true)])
        #expect(k.handle(.character(" "), .repeat, seconds: 1.5) == [])
        #expect(k.handle(.character(" "), .release, seconds: 2) == [.pedal(down: false)])
    }

    @Test func withoutReleasesAPressStrikesOnceAndAutoRepeatDoesNot() {
        var k = TerminalKeyboard()
        #expect(k.handle(.character("k"), .press, seconds: 0) == [.noteOn(note: 72)])
        // A second press 0.3 s later strikes again (a repeated note), and so does the first
        // auto-repeat after the terminal's repeat delay, which cannot be told apart from it;
        // the auto-repeat presses 30 ms apart after it do not.
        #expect(k.handle(.character("k"), .press, seconds: 0.3) == [.noteOn(note: 72)])
        #expect(k.handle(.character("k"), .press, seconds: 0.8) == [.noteOn(note: 72)])
        for i in 1...10 { #expect(k.handle(.character("k"), .press, seconds: 0.8 + 0.03 * Double(i)) == []) }
        #expect(k.handle(.character("k"), .press, seconds: 1.3) == [.noteOn(note: 72)])
        #expect(k.handle(.character("j"), .press, seconds: 1.31) == [.noteOn(note: 71)])
        // No release is ever known: no note-off.
        #expect(k.handle(.character("k"), .release, seconds: 1.4) == [])
        #expect(k.handle(.character(" "), .press, seconds: 2) == [.pedal(down: true)])
        #expect(k.handle(.character(" "), .press, seconds: 3) == [.pedal(down: false)])
    }

    @Test func controlKeys() {
        var k = TerminalKeyboard()
        #expect(k.handle(.up, .press, seconds: 0) == [.volume(stepDecibels: 2)])
        #expect(k.handle(.character("="), .press, seconds: 0) == [.volume(stepDecibels: 2)])
        #expect(k.handle(.down, .repeat, seconds: 0) == [.volume(stepDecibels: -2)])
        #expect(k.handle(.character("-"), .press, seconds: 0) == [.volume(stepDecibels: -2)])
        #expect(k.handle(.character("x"), .press, seconds: 0) == [.damp])
        #expect(k.handle(.character("r"), .press, seconds: 0) == [.nextRoom])
        #expect(k.handle(.enter, .press, seconds: 0) == [.loop])
        #expect(k.handle(.enter, .release, seconds: 0) == [])
        #expect(k.handle(.backspace, .press, seconds: 0) == [.clearLoop])
        #expect(k.handle(.escape, .press, seconds: 0) == [.quit("Esc")])
        #expect(k.handle(.control("c"), .press, seconds: 0) == [.quit("Ctrl-C")])
        #expect(k.handle(.control("d"), .press, seconds: 0) == [.quit("Ctrl-D")])
        #expect(k.handle(.character("q"), .press, seconds: 0) == [])
    }
}

@Suite struct Piano {
    @Test func drawsThirteenKeysInOrderAndLightsExactlyTheSoundingOnes() {
        let lines = PianoView.lines(indent: 0) { $0 == 60 || $0 == 66 }
        #expect(lines.count == 8)
        #expect(lines[1] == "  │C#││D#│    │\u{1B}[7mF#\u{1B}[27m││G#││A#│")
        #expect(lines[2] == "  │ w││ e│    │\u{1B}[7m t\u{1B}[27m││ y││ u│")
        #expect(lines[5] == "│\u{1B}[7mC4\u{1B}[27m││D4││E4││F4││G4││A4││B4││C5│")
        #expect(lines[6] == "│\u{1B}[7m a\u{1B}[27m││ s││ d││ f││ g││ h││ j││ k│")
        #expect(lines[4] == String(repeating: "┌──┐", count: 8))
        let dark = PianoView.lines(indent: 2) { _ in false }
        #expect(!dark.joined().contains("\u{1B}"))
        #expect(dark[5] == "  │C4││D4││E4││F4││G4││A4││B4││C5│")
    }
}
