import ArgumentParser
import BellkeysIO
import Glibc

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the MIDI ports bellkeys can connect to and the sound devices it can play on.",
        discussion: "Ports marked * are connected automatically. Names work with --connect and --device.")

    func run() throws {
        try reporting {
            var missing: [String] = []
            print("MIDI ports (for --connect):")
            do {
                let sequencer = try Sequencer(name: "bellkeys-list")
                let ports = sequencer.ports().filter { $0.sendsMIDI && $0.address.client != sequencer.client }
                if ports.isEmpty { print("  none (plug in a keyboard; bellkeys connects it when it appears)") }
                for port in ports {
                    print(
                        "  \(port.isAutoConnectable ? "*" : " ") " + pad("\(port.address)", 8)
                            + pad(port.portName, 28) + port.clientName)
                }
            } catch {
                print("  none: \(String(describing: error).split(separator: "\n").first ?? "")")
                missing.append("sequencer")
            }
            print("Sound devices (for --device):")
            let devices = pcmDeviceNames()
            let cards = soundCards()
            for card in cards { print("  card \(card.index): \(card.name)") }
            for device in devices {
                print("  " + pad(device.name, 28) + device.description)
            }
            if cards.isEmpty {
                print("  no sound card (/dev/snd has none)")
                missing.append("sound card")
            }
            if !missing.isEmpty {
                throw Failure(
                    "this machine has no \(missing.joined(separator: " and no ")); live playing needs a sequencer and a sound card.\n"
                        + "    What works without them: `bellkeys render FILE.mid -o out.wav` and `bellkeys check`.")
            }
        }
    }
}
