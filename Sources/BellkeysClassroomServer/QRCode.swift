import BellkeysSystem
import CQREncode
import Glibc

/// A QR code's modules, from Debian's libqrencode (a system library, as libsndfile is): the
/// classroom's join address, drawn in the terminal and on the teacher's page.
public struct QRCode: Sendable {
    /// Modules per side (without the quiet zone).
    public let width: Int
    /// Row by row, true for a dark module.
    public let modules: [Bool]

    /// Encodes `text` (8-bit mode, error correction level M: a phone reads it from a projector
    /// across a classroom). Throws if libqrencode cannot (too long, out of memory).
    public init(_ text: String) throws(SystemError) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw SystemError(operation: "QRcode_encodeString8bit (a QR code of \(text.utf8.count) bytes)", code: errno)
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        self.width = width
        modules = (0..<width * width).map { code.pointee.data[$0] & 1 == 1 }
    }

    /// Whether the module at column `x`, row `y` is dark (outside the code: light).
    public func dark(_ x: Int, _ y: Int) -> Bool {
        x >= 0 && y >= 0 && x < width && y < width && modules[y * width + x]
    }
}
