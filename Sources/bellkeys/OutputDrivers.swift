import BellkeysAudio
import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysLoading
import BellkeysModel
import BellkeysSystem

/// The sound output drivers bellkeys knows, and the one place that chooses among them
/// (`--driver`): the only code that names a driver's type. A new driver is a class that
/// conforms to `AudioOutput` in its own files, a case of `Driver`, a branch in `open` and a row
/// in `listings`. Thread: control.
enum OutputDrivers {
    /// What `open` found.
    struct Opened {
        /// The output, or nil with `problem` saying why none could be opened.
        var output: (any AudioOutput)?
        var problem: String?
        /// The bells, loaded at the output's rate (or at --rate's when no output opened).
        var loaded: LoadedInstrument
        /// Lines for the start-up report: which driver and why.
        var notes: [String]
        /// The MIDI input the driver brings (JACK's `midi_in`), made once the console is known
        /// and whether it should connect the keyboards itself (when no sequencer does).
        var midiInput: ((_ console: Console, _ connectsKeyboards: Bool, _ verbose: Bool) -> any LiveInput)?
    }

    /// Opens the output `options` ask for and loads the bells at its rate with `load`. A
    /// server's driver (JACK) decides the rate, so it is tried first, when asked for or found
    /// running; a device's driver (ALSA) is opened at the bells' rate. Throws only when the
    /// driver asked for by name (or by one of its options) cannot be had, or the bells fail to
    /// load; a device that cannot be opened comes back as `problem`.
    static func open(
        _ options: OutputOptions, filter: ChannelFilter, load: (Int?) throws -> LoadedInstrument
    ) throws -> Opened {
        var notes: [String] = []
        let tryJACK = options.driver == .jack || (options.driver == .auto && options.alsaOnlyOptions.isEmpty)
        if tryJACK {
            do {
                let jack = try JACKOutput(
                    channels: options.channels, filter: filter, connection: options.jackConnection)
                let midi: (Console, Bool, Bool) -> any LiveInput = { console, connectsKeyboards, verbose in
                    JACKMIDIInput(
                        output: jack, console: console, connectsPhysicalPorts: connectsKeyboards, verbose: verbose,
                        clock: monotonicInstant)
                }
                return Opened(output: jack, loaded: try load(jack.configuration.sampleRate), notes: [], midiInput: midi)
            } catch let error as JACKError {
                // --jack-connect asks for JACK as --driver jack does.
                if options.driver == .jack || !options.jackConnect.isEmpty { throw Failure(error.description) }
                switch error.kind {
                case .notInstalled: notes.append("driver ALSA (JACK is not installed)")
                case .noServer: notes.append("driver ALSA (no JACK server running)")
                case .refused: notes.append("driver ALSA: " + error.description.replacingFirstLine())
                }
            }
        } else if options.driver == .auto {
            notes.append("driver ALSA (\(options.alsaOnlyOptions.joined(separator: ", ")) given)")
        }
        let loaded = try load(options.rate)
        do {
            let alsa = try ALSAOutput(
                device: options.deviceName, sampleRate: loaded.sampleRate, channels: options.channels,
                periodFrames: options.periodFrames, periods: options.periodCount,
                grows: options.period == nil && options.periods == nil)
            return Opened(output: alsa, loaded: loaded, notes: notes)
        } catch {
            return Opened(output: nil, problem: error.description, loaded: loaded, notes: notes)
        }
    }

    /// Every driver's row for `bellkeys list`, in the order `--driver auto` tries them.
    static func listings() -> [OutputDriverListing] { [JACKOutput.listing(), ALSAOutput.listing()] }
}
