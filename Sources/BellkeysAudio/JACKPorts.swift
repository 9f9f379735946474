import BellkeysControl
import BellkeysEngine
import BellkeysSystem
import CJack
import Glibc
import Synchronization

// The JACK driver's ports and connections: where the outputs go, and the keyboards that
// send to `midi_in`. Thread: control.
extension JACKOutput {
    /// The full names of our ports (`bellkeys:out_1`, ..., `bellkeys:midi_in`).
    public var outputPortNames: [String] {
        (0..<configuration.channels).map { String(cString: bk_jack_port_name(outputPorts[$0])) }
    }
    public var midiPortName: String { String(cString: bk_jack_port_name(midiPort)) }
    /// Connections to `midi_in` removed so far (counted on JACK's notification thread).
    public var midiDisconnectionCount: Int { midiDisconnections.load(ordering: .acquiring) }

    /// The ports of `type` with all of `flags`, matching `pattern` (a regular expression, as
    /// `jack_get_ports` takes), in the server's order.
    func ports(matching pattern: String?, type: String, flags: Int32) -> [String] {
        takeNames(bk_jack_get_ports(client, pattern, type, UInt(flags)))
    }

    /// Connects the output ports as `connection` asks. Returns a line for each connection made
    /// or refused. Thread: control, after `start`.
    public func connectOutputs(_ connection: JACKConnection) -> [String] {
        guard isActive else { return [] }
        let ours = outputPortNames
        var pairs: [(String, String)] = []
        var notes: [String] = []
        switch connection {
        case .none:
            return []
        case .physical:
            let physical = ports(
                matching: nil, type: BK_JACK_AUDIO_TYPE,
                flags: Int32(BK_JACK_PORT_IS_PHYSICAL | BK_JACK_PORT_IS_INPUT))
            if physical.isEmpty {
                return ["no physical playback ports: connect \(ours.joined(separator: ", ")) yourself"]
            }
            if ours.count == 1 {
                pairs = physical.prefix(2).map { (ours[0], $0) }
            } else {
                pairs = Array(zip(ours, physical))
                if ours.count > physical.count {
                    notes.append(
                        "\(ours[physical.count...].joined(separator: ", ")) left unconnected: the server has \(physical.count) playback port\(physical.count == 1 ? "" : "s")"
                    )
                }
            }
        case .ports(let names):
            var targets: [String] = []
            for name in names {
                if name.contains(":") {
                    targets.append(name)
                } else {
                    let found = ports(
                        matching: "^" + escapedPattern(name) + ":", type: BK_JACK_AUDIO_TYPE,
                        flags: Int32(BK_JACK_PORT_IS_INPUT))
                    if found.isEmpty {
                        notes.append("--jack-connect \(name): no client of that name has audio inputs (see `jack_lsp`)")
                    }
                    targets += found
                }
            }
            pairs = Array(zip(ours, targets))
        }
        return pairs.map { from, to in
            let status = bk_jack_connect(client, from, to)
            // EEXIST: already connected (a session manager did it).
            return status == 0 || status == EEXIST
                ? "\(from) → \(to)"
                : "cannot connect \(from) → \(to) (jack_connect: \(status); is there such a port? see `jack_lsp`)"
        } + notes
    }

    /// The physical MIDI capture ports (keyboards the server sees) not yet connected to
    /// `midi_in`; connecting them is the caller's choice. Thread: control.
    public func unconnectedPhysicalMIDIPorts() -> [String] {
        let connected = Set(midiConnections)
        return ports(
            matching: nil, type: BK_JACK_MIDI_TYPE, flags: Int32(BK_JACK_PORT_IS_PHYSICAL | BK_JACK_PORT_IS_OUTPUT)
        )
        .filter { !connected.contains($0) }
    }

    /// Connects `port` (a MIDI output) to `midi_in`. Returns nil, or why not. Thread: control.
    public func connectMIDI(from port: String) -> String? {
        let status = bk_jack_connect(client, port, midiPortName)
        return status == 0 || status == EEXIST ? nil : "jack_connect: \(status)"
    }

    /// The ports sending to `midi_in` now. Thread: control.
    public var midiConnections: [String] {
        takeNames(bk_jack_port_get_connections(midiPort))
    }

    /// Whether ports or connections changed since the last call. Thread: control.
    public func takeGraphChanged() -> Bool { graphChanged.exchange(false, ordering: .acquiring) }

    /// The server's DSP load (every client's), percent. Thread: control.
    public var serverLoadPercent: Double { Double(bk_jack_cpu_load(client)) }
}

/// The names in a NULL-terminated list libjack returned (`jack_get_ports`,
/// `jack_port_get_connections`), which it frees (`jack_free`); empty for NULL.
func takeNames(_ list: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> [String] {
    guard let list else { return [] }
    defer { bk_jack_free(list) }
    var names: [String] = []
    var index = 0
    while let name = list[index] {
        names.append(String(cString: name))
        index += 1
    }
    return names
}

/// `text` with the characters a POSIX regular expression treats specially escaped.
private func escapedPattern(_ text: String) -> String {
    var out = ""
    for character in text {
        if "\\^$.|?*+()[]{}".contains(character) { out.append("\\") }
        out.append(character)
    }
    return out
}
