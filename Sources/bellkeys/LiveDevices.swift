import BellkeysAudio
import BellkeysControl
import BellkeysMIDI
import BellkeysSystem

// The real devices behind the live loop's interfaces (BellkeysControl's LiveDevices.swift): the
// one place that ties the device modules to the inputs that read them.

extension Sequencer: SequencerClient {}
extension Terminal: TerminalDevice {
    public var inputDescriptor: FileDescriptor { FileDescriptor(input) }
}
extension JACKOutput: MIDIPortGraph {}
extension SignalListener: SignalSource {
    public var signalDescriptor: FileDescriptor { FileDescriptor(descriptor) }
}
