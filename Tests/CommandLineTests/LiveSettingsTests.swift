import ArgumentParser
import BellkeysFormats
import Testing

@testable import bellkeys

/// The option values a live command starts its session with, every one as the parser left it.
/// An option group made by `init()` instead of parsed holds its definition, not a value, and
/// swift-argument-parser stops the program when it is read (`bellkeys demo` did so on every
/// machine with a sound card, after its start-up report).
@Suite struct LiveSettingsComeFromTheParser {
    /// The paths, from `settings`, of property-wrapped options that hold a definition, not a value.
    func unparsed(_ value: Any, path: String = "settings") -> [String] {
        var found: [String] = []
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .enum, let child = mirror.children.first, child.label == "definition" {
            return [path]
        }
        for child in mirror.children {
            found += unparsed(child.value, path: path + "." + (child.label ?? "?"))
        }
        return found
    }

    /// Every subcommand that plays live, with the least and the most it is given.
    @Test func everyLiveCommandReadsOnlyParsedValues() throws {
        let live = Bellkeys.configuration.subcommands.compactMap { $0 as? any LiveCommand.Type }
        #expect(live.count == 2)
        for command in live {
            let name = command._commandName
            for arguments in [[name], [name, "--device", "null", "--channels", "1", "--no-ui", "--map", "x.json"]] {
                let parsed = try #require(try Bellkeys.parseAsRoot(arguments) as? any LiveCommand)
                #expect(unparsed(parsed.liveSettings) == [], "bellkeys \(arguments.joined(separator: " "))")
            }
        }
        let web = try #require(try Bellkeys.parseAsRoot(["play", "--web", "--web-port", "0"]) as? Play)
        #expect(web.liveSettings.servesClassroom && unparsed(web.liveSettings) == [])
    }

    @Test func theCheckFindsAnOptionGroupMadeByInit() {
        #expect(unparsed(ClassroomOptions()).count == 5)
        #expect(unparsed(NoteOptions()).count == 4)
    }
}
