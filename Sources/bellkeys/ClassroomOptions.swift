import ArgumentParser

/// The classroom: phones as handbells (`--web`). See docs/handbells.md (for users) and docs/design/classroom-server.md.
struct ClassroomOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Serve the classroom: every phone or tablet on the network that opens the address (or scans the QR code) and types the room code becomes a handbell.",
            discussion:
                "Prints the join address, a QR code of it and a 4-digit room code (new on each start). The teacher's page is /teacher on this computer (or /teacher?key=KEY elsewhere, the key printed at start). Works with the keyboard UI and with --no-ui."
        ))
    var web = false

    @Option(
        name: .customLong("web-port"), parsing: .unconditional,
        help: ArgumentHelp("The classroom's TCP port, 0 to 65535; 0 takes a free one.", valueName: "port"))
    var webPort = 8080

    @Option(
        name: .customLong("web-address"),
        help: ArgumentHelp(
            "Listen only on this IPv4 address of this machine, and put it in the QR code (default: every interface; the QR code then carries the first address that is not loopback).",
            discussion:
                "Names one interface: the Wi-Fi hotspot's address, say, so nothing on the other networks can reach the bells. 127.0.0.1 keeps the classroom to this computer.",
            valueName: "ip"))
    var webAddress: String?

    @Option(
        name: .customLong("web-devices"), parsing: .unconditional,
        help: ArgumentHelp("The most phones that may join at once, 1 to 250.", valueName: "n"))
    var webDevices = 64

    @Option(
        name: .customLong("web-tune"),
        help: ArgumentHelp(
            "A MIDI file the teacher may start as a follow-along, besides the demo tune (repeatable, at most 99 times; default: the demo tune only).",
            discussion:
                "Its notes are moved by octaves onto the bells and cued on the phones that hold them; they are not played.",
            valueName: "file.mid"))
    var webTunes: [String] = []

    func validate() throws {
        if !(0...65_535).contains(webPort) {
            throw ValidationError("--web-port \(webPort) is out of range; use 0 to 65535 (0 takes a free port)")
        }
        if webTunes.count > 99 {
            throw ValidationError("--web-tune is given \(webTunes.count) times; at most 99 tunes")
        }
        if !(1...250).contains(webDevices) {
            throw ValidationError("--web-devices \(webDevices) is out of range; use 1 to 250")
        }
        if let webAddress {
            let parts = webAddress.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw ValidationError(
                    "--web-address \(webAddress) is not an IPv4 address; give one of this machine's, as `ip -4 addr` lists them"
                )
            }
        }
        let given = [
            webAddress.map { _ in "--web-address" }, webPort != 8080 ? "--web-port" : nil,
            webDevices != 64 ? "--web-devices" : nil,
            webTunes.isEmpty ? nil : "--web-tune",
        ]
        .compactMap { $0 }
        if !web, let option = given.first { throw ValidationError("\(option) sets up the classroom; add --web") }
    }
}
