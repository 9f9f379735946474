import BellkeysEngine
// makeEngine, render, constant, impulseKeys, release48: shared with the control side's tests.
@_exported import EngineTestSupport
import Synchronization
import Testing

func expectClose(
    _ a: Float, _ b: Float, tolerance: Float = 1e-6,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(abs(a - b) <= tolerance, "\(a) != \(b)", sourceLocation: sourceLocation)
}
