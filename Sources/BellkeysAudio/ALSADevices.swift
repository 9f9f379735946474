import BellkeysSystem
import CALSA
import Glibc

// The sound cards and PCM devices ALSA knows, for `bellkeys list` and the ALSA driver's errors.

/// Sound cards and PCM devices, for `bellkeys list`. Wraps `snd_device_name_hint`.
public func pcmDeviceNames() -> [(name: String, description: String)] {
    var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    bellkeys_alsa_silence()
    guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
    defer { snd_device_name_free_hint(hints) }
    var result: [(String, String)] = []
    var i = 0
    while let hint = hints[i] {
        i += 1
        func field(_ id: String) -> String? {
            guard let value = snd_device_name_get_hint(hint, id) else { return nil }
            defer { free(value) }
            return String(cString: value)
        }
        if let io = field("IOID"), io != "Output" { continue }
        guard let name = field("NAME") else { continue }
        let description = (field("DESC") ?? "").split(separator: "\n").joined(separator: ", ")
        result.append((name, description))
    }
    return result
}

/// The sound cards present: index and long name. Wraps `snd_card_next`.
public func soundCards() -> [(index: Int, name: String)] {
    var result: [(Int, String)] = []
    var card: Int32 = -1
    while snd_card_next(&card) >= 0, card >= 0 {
        var name: UnsafeMutablePointer<CChar>?
        if snd_card_get_longname(card, &name) >= 0, let name {
            result.append((Int(card), String(cString: name)))
            free(name)
        } else {
            result.append((Int(card), "card \(card)"))
        }
    }
    return result
}
