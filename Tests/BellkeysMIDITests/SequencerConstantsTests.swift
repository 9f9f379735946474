import BellkeysControl
import CALSA
import Testing

/// The sequencer's numbers the control module writes out (so the live loop's interface needs no
/// alsa-lib) are alsa-lib's own.
@Suite struct SequencerConstants {
    @Test func eventTypesAreAlsaLibs() {
        #expect(SequencerEventType.noteOn == Int32(SND_SEQ_EVENT_NOTEON.rawValue))
        #expect(SequencerEventType.noteOff == Int32(SND_SEQ_EVENT_NOTEOFF.rawValue))
        #expect(SequencerEventType.controller == Int32(SND_SEQ_EVENT_CONTROLLER.rawValue))
        #expect(SequencerEventType.programChange == Int32(SND_SEQ_EVENT_PGMCHANGE.rawValue))
        #expect(SequencerEventType.pitchBend == Int32(SND_SEQ_EVENT_PITCHBEND.rawValue))
        #expect(SequencerEventType.keyPressure == Int32(SND_SEQ_EVENT_KEYPRESS.rawValue))
        #expect(SequencerEventType.channelPressure == Int32(SND_SEQ_EVENT_CHANPRESS.rawValue))
        #expect(SequencerEventType.clientExit == Int32(SND_SEQ_EVENT_CLIENT_EXIT.rawValue))
        #expect(SequencerEventType.portStart == Int32(SND_SEQ_EVENT_PORT_START.rawValue))
        #expect(SequencerEventType.portExit == Int32(SND_SEQ_EVENT_PORT_EXIT.rawValue))
        #expect(SequencerEventType.portSubscribed == Int32(SND_SEQ_EVENT_PORT_SUBSCRIBED.rawValue))
        #expect(SequencerEventType.portUnsubscribed == Int32(SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue))
    }

    @Test func portBitsAndTheSystemClientAreAlsaLibs() {
        #expect(SequencerPort.capabilityRead == UInt32(SND_SEQ_PORT_CAP_READ))
        #expect(SequencerPort.capabilitySubscribeRead == UInt32(SND_SEQ_PORT_CAP_SUBS_READ))
        #expect(SequencerPort.capabilityNoExport == UInt32(SND_SEQ_PORT_CAP_NO_EXPORT))
        #expect(SequencerPort.typeMIDIGeneric == UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC))
        #expect(SequencerPort.typeHardware == UInt32(SND_SEQ_PORT_TYPE_HARDWARE))
        #expect(SequencerPort.typeSoftware == UInt32(SND_SEQ_PORT_TYPE_SOFTWARE))
        #expect(SequencerPort.typePort == UInt32(SND_SEQ_PORT_TYPE_PORT))
        #expect(SequencerPort.typeApplication == UInt32(SND_SEQ_PORT_TYPE_APPLICATION))
        #expect(SequencerPort.systemClient == Int(SND_SEQ_CLIENT_SYSTEM))
    }
}
