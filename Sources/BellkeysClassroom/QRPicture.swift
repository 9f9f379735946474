// A QR code's modules (from libqrencode, in BellkeysClassroomServer) drawn for the terminal and for the
// teacher's page. Pure Swift.

/// The QR code as an SVG: one path of dark squares on white, with a quiet zone of 4 modules
/// (the standard's), scaled by the page.
public func qrSVG(width: Int, dark: (Int, Int) -> Bool) -> String {
    let side = width + 8
    var path = ""
    for y in 0..<width {
        var x = 0
        while x < width {
            guard dark(x, y) else {
                x += 1
                continue
            }
            var run = 1
            while x + run < width, dark(x + run, y) { run += 1 }
            path += "M\(x + 4) \(y + 4)h\(run)v1h-\(run)z"
            x += run
        }
    }
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" shape-rendering=\"crispEdges\">"
        + "<rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>\n"
}

/// The QR code for a terminal: two modules a character (the upper and lower half blocks),
/// black on bright white whatever the terminal's colours, with a quiet zone of `quiet`
/// modules (4 is the standard's; phones read 2 from a screen).
public func qrTerminalLines(width: Int, quiet: Int = 2, dark: (Int, Int) -> Bool) -> [String] {
    let side = width + 2 * quiet
    func at(_ x: Int, _ y: Int) -> Bool { dark(x - quiet, y - quiet) }
    var lines: [String] = []
    for row in stride(from: 0, to: side, by: 2) {
        var line = "\u{1B}[30;107m"
        for x in 0..<side {
            let top = at(x, row), bottom = row + 1 < side ? at(x, row + 1) : false
            line += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
        }
        lines.append(line + "\u{1B}[0m")
    }
    return lines
}
