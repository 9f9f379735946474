import Foundation
import Testing

/// The other way round: what `--help` offers is in the docs, with its default, and the keys the
/// docs name are in `play --help`.
@Suite struct HelpIsDocumented {
    /// Every option of every command's help has a row (or a "(default: X)") in a user page that
    /// states its default: the command's own section of docs/commands.md, or a page that speaks
    /// of it for every command; `everyDefaultAndRangeInTheDocsIsTheHelps` holds the default to
    /// the help's.
    @Test func everyOptionInTheHelpIsDocumentedWithItsDefault() throws {
        let claims = try docPages().filter(\.isUserPage).flatMap { try OptionClaim.read($0) }
            .filter { $0.defaultText != nil }
        for command in try DocumentedOptions.commands() {
            for name in try HelpOption.parse(command: command).keys.sorted()
            where !["--help", "--version"].contains(name) {
                let documented = claims.contains { $0.option == name && ($0.command == command || $0.command == nil) }
                #expect(
                    documented, "bellkeys help \(command) offers \(name), which no user page gives with its default")
            }
        }
    }

    /// The keys docs/classroom.md's table names are the keys `play --help` names.
    @Test func everyKeyTheDocsNameIsInTheHelp() throws {
        let help = try bellkeys(["help", "play"]).output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let page = try DocPage(path: "docs/classroom.md")
        guard let header = page.lines.firstIndex(where: { $0.hasPrefix("| key | does |") }) else {
            Issue.record("docs/classroom.md has no key table")
            return
        }
        var keys: [String] = []
        for line in page.lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cell = line.split(separator: "|")[0].trimmingCharacters(in: .whitespaces)
            if cell.hasPrefix("`a w s") { continue } // the note keys: the help spells them out
            keys += cell.replacing(/\(or [^)]*\)/, with: "").split(separator: ",").flatMap { $0.split(separator: "/") }
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }.filter { !$0.isEmpty }
        }
        #expect(keys.count >= 12, "\(keys)")
        for key in keys {
            let words = ["Esc", "Ctrl-C", "Ctrl-D", "Enter", "Backspace", "space"]
            let found =
                words.contains(key)
                ? help.contains(key) : help.contains(" \(key) ") || help.contains("\(key)/") || help.contains("/\(key)")
            #expect(found, "docs/classroom.md names the key \(key); bellkeys help play does not")
        }
    }
}
