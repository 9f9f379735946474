import BellkeysTerminal
import Testing

/// The picture of an instrument over the whole keyboard: its keys where they fit, else two
/// octaves (or one) that move with the computer keyboard; the octave keys; a note beyond.
@Suite struct PianoPictureOfAnInstrument {
    let lit = "\u{1B}[7m", unlit = "\u{1B}[27m"
    /// The 13 bells as bellkeys has always drawn them.
    let bells = [
        "    ┌──┐┌──┐    ┌──┐┌──┐┌──┐",
        "    │C#││D#│    │F#││G#││A#│",
        "    │ w││ e│    │ t││ y││ u│",
        "    └──┘└──┘    └──┘└──┘└──┘",
        "  ┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐┌──┐",
        "  │C4││D4││E4││F4││G4││A4││B4││C5│",
        "  │ a││ s││ d││ f││ g││ h││ j││ k│",
        "  └──┘└──┘└──┘└──┘└──┘└──┘└──┘└──┘",
    ]
    let glockenspiel = PianoPicture(playable: 67...96, isMap: false)
    let piano = PianoPicture(playable: 21...108, isMap: false)

    @Test func theBundledBellsAndTheExampleMapsAreDrawnAsAlways() {
        // tags.json and plain.json (C4..C5), handbells.json (C major), tower-ring.json (C4..A4).
        for playable in [60...72, 60...72, 60...69] {
            let picture = PianoPicture(playable: playable, isMap: true)
            #expect(picture.keys == 60...72)
            let lines = picture.lines(keyboardLowest: 60, columns: 80, sounding: [])
            #expect(Array(lines.prefix(8)) == bells)
            #expect(lines[8] == "  keys play C4..C5 (←/→ octave) · sounding: -")
        }
        #expect(PianoPicture(playable: nil, isMap: true).keys == 60...72)
        // A map's keys beyond C4..C5 widen the picture; an SFZ instrument's range is its own,
        // from a white key to a white key.
        #expect(PianoPicture(playable: 48...67, isMap: true).keys == 48...72)
        #expect(PianoPicture(playable: 61...66, isMap: false).keys == 60...67)
    }

    @Test func aRangeThatFitsIsDrawnWholeWithTheComputerKeysOnItsOctave() {
        // G4..C7: 18 white keys, 76 columns with the indent and the mark's room.
        #expect(TerminalKeyboard.lowestNote(for: 67...96) == 72)
        let lines = glockenspiel.lines(keyboardLowest: 72, columns: 77, sounding: [79])
        #expect(lines.count == 9)
        #expect(lines[0] == "    ┌──┐┌──┐    ┌──┐┌──┐    ┌──┐┌──┐┌──┐    ┌──┐┌──┐    ┌──┐┌──┐┌──┐")
        #expect(lines[1] == "    │G#││A#│    │C#││D#│    │F#││G#││A#│    │C#││D#│    │F#││G#││A#│")
        #expect(lines[2] == "    │  ││  │    │ w││ e│    │ t││ y││ u│    │  ││  │    │  ││  ││  │")
        #expect(
            lines[5] == "  │G4││A4││B4││C5││D5││E5││F5││\(lit)G5\(unlit)││A5││B5││C6││D6││E6││F6││G6││A6││B6││C7│")
        #expect(
            lines[6] == "  │  ││  ││  ││ a││ s││ d││ f││\(lit) g\(unlit)││ h││ j││ k││  ││  ││  ││  ││  ││  ││  │")
        #expect(lines[7] == "  " + String(repeating: "└──┘", count: 18))
        #expect(lines[8] == "  keys play C5..C6 (←/→ octave) · sounding: G5")
    }

    @Test func aRangeTooWideShowsTwoOctavesFromTheKeyboardsC() {
        // One column short for G4..C7: C5..C7, from the keyboard's C.
        #expect(glockenspiel.shown(keyboardLowest: 72, columns: 76) == 72...96)
        #expect(
            glockenspiel.lines(keyboardLowest: 72, columns: 76, sounding: [])[8]
                == "  keys play C5..C6 (←/→ octave) · showing C5..C7 of G4..C7 · sounding: -")
        // A piano's 88 keys in 100 columns: C4..C6 around middle C.
        #expect(TerminalKeyboard.lowestNote(for: 21...108) == 60)
        let lines = piano.lines(keyboardLowest: 60, columns: 100, sounding: [])
        #expect(lines[5] == "  │C4││D4││E4││F4││G4││A4││B4││C5││D5││E5││F5││G5││A5││B5││C6│")
        #expect(lines[6] == "  │ a││ s││ d││ f││ g││ h││ j││ k││  ││  ││  ││  ││  ││  ││  │")
        #expect(lines[8] == "  keys play C4..C5 (←/→ octave) · showing C4..C6 of A0..C8 · sounding: -")
        // Too narrow for two octaves (64 columns): one.
        #expect(glockenspiel.shown(keyboardLowest: 72, columns: 64) == 72...84)
        #expect(
            glockenspiel.lines(keyboardLowest: 72, columns: 64, sounding: [])[5] == "  │C5││D5││E5││F5││G5││A5││B5││C6│"
        )
    }

    @Test func theOctaveKeysMoveTheKeyboardAndTheWindowWithinMIDIsRange() {
        var k = TerminalKeyboard(lowestNote: 60)
        #expect(k.handle(.right, .press, seconds: 0) == [.octave(lowestNote: 72)])
        #expect(k.handle(.character(">"), .press, seconds: 0) == [.octave(lowestNote: 84)])
        #expect(k.handle(.character("a"), .press, seconds: 1) == [.noteOn(note: 84)])
        #expect(piano.shown(keyboardLowest: k.lowestNote, columns: 100) == 84...108)
        #expect(k.handle(.left, .press, seconds: 0) == [.octave(lowestNote: 72)])
        #expect(k.handle(.character(","), .press, seconds: 0) == [.octave(lowestNote: 60)])
        #expect(k.handle(.character("<"), .press, seconds: 0) == [.octave(lowestNote: 48)])
        #expect(k.handle(.character("."), .press, seconds: 0) == [.octave(lowestNote: 60)])
        // Clamped: C-1 (0) is the lowest C, C9 (120) the highest, where the keys reach G9 (127).
        var low = TerminalKeyboard(lowestNote: 0)
        #expect(low.handle(.left, .press, seconds: 0) == [])
        #expect(low.lowestNote == 0)
        #expect(low.handle(.character("k"), .press, seconds: 0) == [.noteOn(note: 12)])
        #expect(
            piano.lines(keyboardLowest: 0, columns: 100, sounding: [])[5].hasPrefix(
                "  │ C││ D││ E││ F││ G││ A││ B││C0│"))
        var high = TerminalKeyboard(lowestNote: 120)
        #expect(high.handle(.right, .press, seconds: 0) == [])
        #expect(high.handle(.character("g"), .press, seconds: 0) == [.noteOn(note: 127)])
        #expect(high.handle(.character("y"), .press, seconds: 0) == [])
        let top = piano.lines(keyboardLowest: 120, columns: 100, sounding: [])
        #expect(top[5] == "  │C8││D8││E8││F8││G8││A8││B8││C9││D9││E9││F9││G9│")
        #expect(top[6] == "  │  ││  ││  ││  ││  ││  ││  ││ a││ s││ d││ f││ g│")
        #expect(top[8] == "  keys play C9..G9 (←/→ octave) · showing C8..G9 of A0..C8 · sounding: -")
        #expect(TerminalKeyboard.lowestNote(for: 0...5) == 0 && TerminalKeyboard.lowestNote(for: 122...127) == 120)
        #expect(TerminalKeyboard.lowestNote(for: 36...48) == 36 && TerminalKeyboard.lowestNote(for: nil) == 60)
    }

    @Test func aKeyHeldAcrossAnOctaveShiftReleasesTheNoteItStruck() {
        var k = TerminalKeyboard()
        k.reportsReleases = true
        #expect(k.handle(.character("a"), .press, seconds: 0) == [.noteOn(note: 60)])
        #expect(k.handle(.right, .press, seconds: 0.1) == [.octave(lowestNote: 72)])
        #expect(k.handle(.character("a"), .release, seconds: 0.2) == [.noteOff(note: 60)])
        #expect(k.handle(.character("a"), .press, seconds: 0.3) == [.noteOn(note: 72)])
        #expect(k.notesDown == [72])
    }

    @Test func aNoteBeyondThePictureMarksItsSideAndIsCounted() {
        let picture = PianoPicture(playable: 60...72, isMap: true)
        let lines = picture.lines(keyboardLowest: 60, columns: 80, sounding: [48, 60, 84])
        #expect(lines[5] == "◀ │\(lit)C4\(unlit)││D4││E4││F4││G4││A4││B4││C5│ ▶")
        #expect(lines[6] == "  │\(lit) a\(unlit)││ s││ d││ f││ g││ h││ j││ k│")
        #expect(lines[8] == "  keys play C4..C5 (←/→ octave) · sounding: C3 C4 C6 (2 beyond the picture)")
        let above = picture.lines(keyboardLowest: 60, columns: 80, sounding: [84])
        #expect(above[5] == bells[5] + " ▶")
        #expect(above[8] == "  keys play C4..C5 (←/→ octave) · sounding: C6 (1 beyond the picture)")
        // In a window, a note of the instrument outside it counts as beyond too.
        let window = piano.lines(keyboardLowest: 60, columns: 100, sounding: [21])
        #expect(window[5].hasPrefix("◀ │C4│") && !window[5].hasSuffix("▶"))
        #expect(window[8].hasSuffix("sounding: A0 (1 beyond the picture)"))
    }
}
