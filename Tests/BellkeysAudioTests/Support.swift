import Foundation

/// A new empty folder for one test.
func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "bellkeys-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
