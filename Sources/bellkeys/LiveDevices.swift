import BellkeysAudio
import BellkeysControl
import BellkeysMIDI
import BellkeysSystem

// The real devices behind the live loop's interfaces (BellkeysControl's LiveDevices.swift): the
// one place that ties the device modules to the inputs that read them.

/// Now on the monotonic clock, as the inputs and the player take it (the system module reads it
/// raw, for the render path).
func monotonicInstant() -> MonotonicInstant { MonotonicInstant(nanoseconds: monotonicNanoseconds()) }

extension Sequencer: SequencerClient {}
extension Terminal: TerminalDevice {
    public var inputDescriptor: FileDescriptor { FileDescriptor(input) }
}
extension JACKOutput: MIDIPortGraph {}
extension SignalListener: SignalSource {
    public var signalDescriptor: FileDescriptor { FileDescriptor(descriptor) }
}
