import BellkeysFormats
import Testing

@Suite struct SettingsFileReading {
    private func read(_ text: String) throws(SettingsFileError) -> [SettingsLine] {
        try parseSettingsFile(Array(text.utf8), file: "bellkeys.conf")
    }

    private func problem(_ text: String) -> SettingsFileError? {
        do {
            _ = try read(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func optionsValuesCommentsAndQuotes() throws {
        let lines = try read(
            """
            # The Pi in room 4
            --device plughw:CARD=Device\r
              --period 128   # longer, for the Pi
            --no-ui

            --map "/home/teacher/My Bells/map.json"   # quoted: # kept inside
            --jack-connect=system:playback_1
            --web-tune '/srv/tunes/a #1.mid'
            --connect Keystation 61 MIDI 1
            --transpose -12
            --device = hw:2
            """)
        #expect(
            lines == [
                SettingsLine(line: 2, option: "--device", value: "plughw:CARD=Device"),
                SettingsLine(line: 3, option: "--period", value: "128"),
                SettingsLine(line: 4, option: "--no-ui", value: nil),
                SettingsLine(line: 6, option: "--map", value: "/home/teacher/My Bells/map.json"),
                SettingsLine(line: 7, option: "--jack-connect", value: "system:playback_1"),
                SettingsLine(line: 8, option: "--web-tune", value: "/srv/tunes/a #1.mid"),
                SettingsLine(line: 9, option: "--connect", value: "Keystation 61 MIDI 1"),
                SettingsLine(line: 10, option: "--transpose", value: "-12"),
                SettingsLine(line: 11, option: "--device", value: "hw:2"),
            ])
        #expect(lines[3].arguments == ["--map=/home/teacher/My Bells/map.json"])
        #expect(lines[2].arguments == ["--no-ui"])
        #expect(try read("").isEmpty)
        #expect(try read("# nothing set\n\n   \n").isEmpty)
        #expect(try read("--map \"\"") == [SettingsLine(line: 1, option: "--map", value: "")])
    }

    @Test func badLinesNameTheLineAndTheFix() {
        let bare = problem("# ok\ndevice hw:1\n")
        #expect(bare?.line == 2)
        #expect(bare?.description.contains("\"device hw:1\" is not an option") == true)
        #expect(bare?.fix.hasSuffix("--device hw:1") == true)
        #expect(problem("-q")?.line == 1)
        #expect(problem("--\n")?.line == 1)
        #expect(problem("--dev!ce x")?.message.contains("not an option's name") == true)
        #expect(problem("--map \"/a b")?.message.contains("never closes") == true)
        #expect(problem("--map \"/a\" b")?.message.contains("follows the quoted value") == true)
        #expect(problem("--period=")?.message.contains("gives no value") == true)
        #expect(problem("--a 1\n--b \u{0}")?.line == 2)
        #expect(problem("--a 1\n--map b\u{0C}")?.message == "holds the control character U+000C")
        #expect(problem("--map a\rb")?.line == 1)
        let latin1 = Array("--a 1\n--map caf".utf8) + [0xE9] + Array("\n".utf8)
        #expect(throws: SettingsFileError.self) { try parseSettingsFile(latin1, file: "x") }
        do {
            _ = try parseSettingsFile(latin1, file: "x")
        } catch {
            #expect(error.line == 2)
        }
        let large = [UInt8](repeating: 0x23, count: settingsFileLimit + 1)
        #expect(throws: SettingsFileError.self) { try parseSettingsFile(large, file: "x") }
    }
}
