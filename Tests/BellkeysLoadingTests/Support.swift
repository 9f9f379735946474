import BellkeysAudio
import BellkeysEngine
import BellkeysLoading
import BellkeysSystem
import Foundation

/// The repository's Samples/ folder.
let samplesFolder: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("Samples").path
}()

/// A new empty folder for one test.
func temporaryFolder() -> String {
    let path = NSTemporaryDirectory() + "bellkeys-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func write(_ text: String, to path: String) { try! text.write(toFile: path, atomically: true, encoding: .utf8) }

func writeWAV(_ frames: [Float], to path: String, sampleRate: Int = 48_000, format: OutputSampleFormat = .f32) throws {
    let writer = try SoundFileWriter(path: path, sampleRate: sampleRate, channelCount: 1, format: format)
    try frames.withUnsafeBufferPointer { try writer.write($0) }
    try writer.finish()
}

/// Frames of a WAV file as floats (first channel), via libsndfile.
func readWAV(_ path: String) throws -> (frames: [Float], sampleRate: Int, channels: Int) {
    try readSoundFile(path: path)
}

/// Magnitude of the frequency `hertz` in `frames` (Goertzel).
func magnitude(_ frames: ArraySlice<Float>, hertz: Double, sampleRate: Int) -> Double {
    let w = 2 * Double.pi * hertz / Double(sampleRate)
    let c = 2 * cos(w)
    var s1 = 0.0, s2 = 0.0
    for x in frames {
        let s0 = Double(x) + c * s1 - s2
        s2 = s1
        s1 = s0
    }
    return sqrt(max(0, s1 * s1 + s2 * s2 - c * s1 * s2)) / Double(frames.count)
}
