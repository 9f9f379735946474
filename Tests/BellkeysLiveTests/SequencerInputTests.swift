import BellkeysControl
import BellkeysEngine
import BellkeysLive
import BellkeysModel
import EngineTestSupport
import Testing

/// The sequencer's event decoding as a pure function, and the MIDI keyboards' input policy over
/// a fake sequencer: which ports are connected (every keyboard, or --connect's), hotplug, a
/// keyboard unplugged releasing what it held, --channel, a broken input.
@Suite struct SequencerKeyboards {
    let g64 = VelocityCurve.square.gain(velocity: 64)
    let keyboard = SequencerPort(
        address: SequencerAddress(client: 24, port: 0), clientName: "USB Keyboard", portName: "USB Keyboard MIDI 1",
        capability: PortBits.sends, type: PortBits.hardware)
    let synth = SequencerPort(
        address: SequencerAddress(client: 130, port: 0), clientName: "vmpk", portName: "out",
        capability: PortBits.sends, type: PortBits.application)
    let through = SequencerPort(
        address: SequencerAddress(client: 14, port: 0), clientName: "Midi Through", portName: "Midi Through Port-0",
        capability: PortBits.sends, type: PortBits.hardware)
    let announce = SequencerPort(
        address: SequencerAddress(client: 0, port: 1), clientName: "System", portName: "Announce",
        capability: PortBits.sends, type: 0)
    let playback = SequencerPort(
        address: SequencerAddress(client: 20, port: 0), clientName: "Synth", portName: "in",
        capability: PortBits.receives, type: PortBits.hardware)
    let ours = SequencerPort(
        address: SequencerAddress(client: 128, port: 0), clientName: "bellkeys", portName: "bellkeys",
        capability: PortBits.sends | PortBits.receives, type: PortBits.application)

    func make(_ patterns: [String] = [], filter: ChannelFilter = .all, verbose: Bool = false)
        -> (SequencerInput, FakeSequencer, TestClock, Transcript)
    {
        let sequencer = FakeSequencer(), clock = TestClock(), transcript = Transcript()
        sequencer.present = [announce, through, playback, keyboard, ours, synth]
        let input = SequencerInput(
            sequencer: sequencer, console: transcript.console, patterns: patterns, filter: filter, verbose: verbose,
            clock: clock.read)
        return (input, sequencer, clock, transcript)
    }

    @Test func eventFieldsDecodeToMessagesMaskedAsMIDIBytes() {
        let source = SequencerAddress(client: 24, port: 0)
        func decode(_ fields: SequencerEventFields) -> SequencerEvent { SequencerEvent(decoding: fields) }
        #expect(
            decode(.init(type: SequencerEventType.noteOn, source: source, note: (0x13, 0xBC, 0xFF)))
                == .midi(source: source, message: .noteOn(channel: 3, note: 60, velocity: 127)))
        #expect(
            decode(.init(type: SequencerEventType.noteOff, source: source, note: (15, 72, 0)))
                == .midi(source: source, message: .noteOff(channel: 15, note: 72, velocity: 0)))
        // A controller's number masked to 7 bits, its value clamped to 0...127.
        #expect(
            decode(.init(type: SequencerEventType.controller, source: source, control: (1, 0x87, 300)))
                == .midi(source: source, message: .controlChange(channel: 1, controller: 7, value: 127)))
        #expect(
            decode(.init(type: SequencerEventType.controller, source: source, control: (0, 64, -5)))
                == .midi(source: source, message: .controlChange(channel: 0, controller: 64, value: 0)))
        // alsa-lib's bend, -8192...8191, as MIDI's 0...16383 (the centre 8192), clamped.
        #expect(
            decode(.init(type: SequencerEventType.pitchBend, source: source, control: (2, 0, -8192)))
                == .midi(source: source, message: .pitchBend(channel: 2, value: 0)))
        #expect(
            decode(.init(type: SequencerEventType.pitchBend, source: source, control: (2, 0, 9000)))
                == .midi(source: source, message: .pitchBend(channel: 2, value: 16_383)))
        #expect(MIDIMessage.pitchBend(channel: 2, value: 8_192).bytes == (0xE2, 0, 64))
        // A program change: alsa-lib's program in `data.control.value`, clamped to 0...127.
        #expect(
            decode(.init(type: SequencerEventType.programChange, source: source, control: (3, 0, 14)))
                == .midi(source: source, message: .programChange(channel: 3, program: 14)))
        #expect(
            decode(.init(type: SequencerEventType.programChange, source: source, control: (3, 0, 200)))
                == .midi(source: source, message: .programChange(channel: 3, program: 127)))
        #expect(MIDIMessage.programChange(channel: 3, program: 14).bytes == (0xC3, 14, 0))
        #expect(MIDIMessage(status: 0xC3, data1: 14, data2: 0) == .programChange(channel: 3, program: 14))
        // Pressure: a key's as alsa-lib's note velocity, the channel's in `data.control.value`
        // (clamped), each back to its bytes and from them.
        #expect(
            decode(.init(type: SequencerEventType.keyPressure, source: source, note: (4, 61, 99)))
                == .midi(source: source, message: .keyPressure(channel: 4, note: 61, value: 99)))
        #expect(
            decode(.init(type: SequencerEventType.channelPressure, source: source, control: (5, 0, 300)))
                == .midi(source: source, message: .channelPressure(channel: 5, value: 127)))
        #expect(MIDIMessage.keyPressure(channel: 4, note: 61, value: 99).bytes == (0xA4, 61, 99))
        #expect(MIDIMessage.channelPressure(channel: 5, value: 40).bytes == (0xD5, 40, 0))
        #expect(MIDIMessage(status: 0xA4, data1: 61, data2: 99) == .keyPressure(channel: 4, note: 61, value: 99))
        #expect(MIDIMessage(status: 0xD5, data1: 40, data2: 0) == .channelPressure(channel: 5, value: 40))
        #expect(MIDIMessage(status: 0xF0, data1: 0, data2: 0) == nil)
        let port = SequencerAddress(client: 24, port: 1), ours = SequencerAddress(client: 128, port: 0)
        #expect(decode(.init(type: SequencerEventType.portStart, address: port)) == .portStarted(port))
        #expect(decode(.init(type: SequencerEventType.portExit, address: port)) == .portExited(port))
        #expect(decode(.init(type: SequencerEventType.clientExit, address: port)) == .clientExited(client: 24))
        #expect(
            decode(.init(type: SequencerEventType.portSubscribed, connection: (port, ours)))
                == .subscribed(sender: port, destination: ours))
        #expect(
            decode(.init(type: SequencerEventType.portUnsubscribed, connection: (port, ours)))
                == .unsubscribed(sender: port, destination: ours))
        // ALSA's numbers (asequencer.h), so the table above is the header's.
        #expect(
            [
                SequencerEventType.noteOn, SequencerEventType.noteOff, SequencerEventType.controller,
                SequencerEventType.clientExit, SequencerEventType.portStart, SequencerEventType.portExit,
                SequencerEventType.portSubscribed, SequencerEventType.portUnsubscribed, SequencerEventType.pitchBend,
                SequencerEventType.programChange, SequencerEventType.keyPressure, SequencerEventType.channelPressure,
            ] == [6, 7, 10, 61, 63, 64, 66, 67, 13, 11, 8, 12])
        // Anything else (a clock, 36) is told by its type.
        #expect(decode(.init(type: 36, source: source)) == .other(source: source, type: 36))
    }

    @Test func everyKeyboardIsConnectedButThroughPortsSystemPortsAndOurOwn() {
        let (input, sequencer, _, transcript) = make()
        input.connectPresent()
        #expect(sequencer.subscribed == [keyboard.address, synth.address])
        #expect(input.connectedNames == ["USB Keyboard MIDI 1", "out"])
        #expect(
            transcript.lines == [
                "connected 24:0 USB Keyboard MIDI 1 (USB Keyboard)", "connected 130:0 out (vmpk)",
            ])
    }

    @Test func connectPatternsChooseThePortsAndSayWhichAreMissing() {
        let (input, sequencer, clock, transcript) = make(["through", "Nord"])
        input.connectPresent()
        #expect(sequencer.subscribed == [through.address])
        #expect(transcript.lines.last == "  waiting for 'Nord' to appear")
        // The Nord is plugged in: connected when its port starts.
        let nord = SequencerPort(
            address: SequencerAddress(client: 28, port: 0), clientName: "Nord Stage 3", portName: "Nord MIDI",
            capability: PortBits.sends, type: PortBits.hardware)
        sequencer.present.append(nord)
        sequencer.waiting = [(.portStarted(nord.address), clock.now), (.portStarted(synth.address), 0)]
        let rig = Rig(impulseBells())
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(sequencer.subscribed == [through.address, nord.address])
    }

    @Test func anUnpluggedKeyboardReleasesWhatItHeldAndNoOtherKeyboardsNotes() {
        let rig = Rig(longBells(2))
        let (input, sequencer, clock, transcript) = make()
        input.connectPresent()
        sequencer.waiting = [
            (.midi(source: keyboard.address, message: .noteOn(channel: 0, note: 60, velocity: 64)), rig.at(100)),
            (.midi(source: synth.address, message: .noteOn(channel: 0, note: 61, velocity: 64)), rig.at(100)),
        ]
        _ = input.drain(ready: true, player: rig.player)
        clock.now = rig.at(1_000)
        sequencer.waiting = [(.portExited(keyboard.address), clock.now)]
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(2_000)
        #expect(
            transcript.lines.last
                == "disconnected 24:0 USB Keyboard MIDI 1 (USB Keyboard): port gone; released 1 held note")
        #expect(input.connectedNames == ["out"])
        // Both from 164; C4 damped at 1,064 over 48 frames; C♯4 rings on.
        #expect(abs(rig.out[164] - 2 * g64) < 1e-6 && abs(rig.out[1_063] - 2 * g64) < 1e-6)
        #expect(abs(rig.out[1_112] - g64) < 1e-6 && abs(rig.out[1_999] - g64) < 1e-6)
        // The other keyboard's client goes: its note is released too.
        clock.now = rig.at(2_000)
        sequencer.waiting = [(.clientExited(client: 130), clock.now)]
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(3_000)
        #expect(transcript.lines.last == "disconnected 130:0 out (vmpk): client gone; released 1 held note")
        #expect(rig.sounding(2_064 + 48..<3_000).isEmpty)
    }

    @Test func channelFilterDropsOtherChannelsButCountsThem() {
        let rig = Rig(impulseBells())
        let (input, sequencer, _, _) = make(filter: ChannelFilter(channel: 1, skipsDrums: false))
        rig.player.play(.controlChange(channel: 1, controller: 7, value: 127), from: nil, arrival: rig.at(0))
        sequencer.waiting = [
            (.midi(source: keyboard.address, message: .noteOn(channel: 0, note: 60, velocity: 127)), rig.at(100)),
            (.midi(source: keyboard.address, message: .noteOn(channel: 1, note: 62, velocity: 127)), rig.at(100)),
        ]
        _ = input.drain(ready: true, player: rig.player)
        _ = rig.at(1_000)
        #expect(input.eventsReceived == 2)
        #expect(rig.sounding(0..<1_000) == [166])
    }

    @Test func aConnectionSomeoneElseMadeIsReportedAndABrokenInputStops() {
        let rig = Rig(impulseBells())
        let (input, sequencer, _, transcript) = make(["none such"])
        sequencer.waiting = [
            (.subscribed(sender: playback.address, destination: SequencerAddress(client: 128, port: 0)), 0),
            (.subscribed(sender: announce.address, destination: SequencerAddress(client: 128, port: 0)), 0),
        ]
        #expect(input.drain(ready: true, player: rig.player) == .carryOn)
        #expect(transcript.lines == ["connected 20:0 in (Synth)"])
        sequencer.readFailureMessage = "No such device"
        guard case .failed(let reason, let message) = input.drain(ready: true, player: rig.player) else {
            Issue.record("a failed read did not stop the input")
            return
        }
        #expect(reason == "the MIDI input failed")
        #expect(message == "the MIDI input (ALSA sequencer) failed: No such device")
    }
}
