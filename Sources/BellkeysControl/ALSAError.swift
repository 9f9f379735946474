/// A failed ALSA call: the operation, the device, alsa-lib's own message (`snd_strerror` of the
/// code, taken where the call failed), and what to do. A value the live loop's interfaces carry
/// (`SequencerClient.connect`), so that fakes throw it without alsa-lib. Thread: any.
public struct ALSAError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var device: String
    public var code: Int32
    public var message: String
    public var fix: String

    public init(operation: String, device: String, code: Int32, message: String, fix: String = "") {
        self.operation = operation
        self.device = device
        self.code = code
        self.message = message
        self.fix = fix
    }

    public var description: String {
        "\(device): cannot \(operation): \(message)" + (fix.isEmpty ? "" : "\n    fix: \(fix)")
    }
}
