import ArgumentParser
import BellkeysAudio
import BellkeysControl
import BellkeysMIDI
import Glibc

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the MIDI ports bellkeys can connect to and the sound devices it can play on.",
        discussion: "Ports marked * are connected automatically. Names work with --connect and --device.")

    func run() throws {
        try reporting {
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
                // Not a reason to fail: JACK brings its own MIDI input, and the computer keyboard plays.
                print("  none: \(String(describing: error).split(separator: "\n").first ?? "")")
            }
            // Each driver lists what it finds (--driver auto tries them in this order).
            let drivers = OutputDrivers.listings()
            for driver in drivers {
                print("Sound output through \(driver.name) (--driver \(driver.name)):")
                for line in driver.lines { print(line) }
            }
            // Live playing needs one driver that could play.
            if !drivers.contains(where: \.canPlay) {
                // Tools/play reads "this machine has no sound card;" to render the demo to a file
                // instead (CommandLineTests checks the sentence).
                throw Failure(
                    "this machine has no sound card; live playing needs one, or a running JACK server.\n"
                        + "    What works without them: `bellkeys render FILE.mid -o out.wav` and `bellkeys check`.")
            }
        }
    }
}
