import BellkeysControl
import CALSA

// The sequencer's values (BellkeysControl's SequencerValues.swift) made from alsa-lib's records.

extension SequencerAddress {
    /// The address alsa-lib gives.
    init(_ address: snd_seq_addr_t) { self.init(client: Int(address.client), port: Int(address.port)) }
}

extension SequencerPort {
    /// The port described by alsa-lib's info records.
    init(_ clientInfo: OpaquePointer?, _ portInfo: OpaquePointer?) {
        self.init(
            address: SequencerAddress(
                client: Int(snd_seq_port_info_get_client(portInfo)),
                port: Int(snd_seq_port_info_get_port(portInfo))),
            clientName: String(cString: snd_seq_client_info_get_name(clientInfo)),
            portName: String(cString: snd_seq_port_info_get_name(portInfo)),
            capability: snd_seq_port_info_get_capability(portInfo), type: snd_seq_port_info_get_type(portInfo))
    }
}
