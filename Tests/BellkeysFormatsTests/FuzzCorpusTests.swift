import FuzzChecks
import Testing

/// Every input of the fuzzing corpus (Tests/Fuzz/Corpus: seeds, and any input that once broke
/// a rule, kept as `regression-*`) still keeps the rules the fuzz targets check.
@Suite struct FuzzCorpus {
    static let corpus =
        String(
            #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(2)
                .joined(separator: "/")) + "/Fuzz/Corpus"

    @Test(arguments: filesAt(Self.corpus + "/midi-file"))
    func midiFileInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(midiFileViolations(bytes) == [])
    }

    @Test(arguments: filesAt(Self.corpus + "/map-file"))
    func mapFileInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(mapFileViolations(bytes) == [])
    }

    @Test(arguments: filesAt(Self.corpus + "/sf2-file"))
    func soundFontInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(soundFontViolations(bytes) == [])
    }

    @Test(arguments: filesAt(Self.corpus + "/pupil-message"))
    func pupilMessageInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(pupilMessageViolations(bytes) == [])
    }

    @Test(arguments: filesAt(Self.corpus + "/settings-file"))
    func settingsFileInput(path: String) throws {
        let bytes = try #require(contents(of: path))
        #expect(settingsFileViolations(bytes) == [])
    }

    @Test func theCorpusIsThere() {
        #expect(filesAt(Self.corpus + "/midi-file").count >= 10)
        #expect(filesAt(Self.corpus + "/map-file").count >= 7)
        #expect(filesAt(Self.corpus + "/pupil-message").count >= 7)
        #expect(filesAt(Self.corpus + "/sf2-file").count >= 2)
        #expect(filesAt(Self.corpus + "/settings-file").count >= 4)
    }
}
