import BellkeysFormats

/// What must hold of the sets of an accepted map (empty for a map of one instrument): each
/// named once, on one line; programs and banks in range, each program and bank choosing one
/// set; channels 0 to 15, each starting on one set; each set an instrument of its own fields
/// (itself with no sets) or a file, not both.
func setViolations(_ sets: [MapSet]) -> [String] {
    var broken: [String] = []
    var names = Set<String>(), choices = Set<String>(), channels = Set<Int>()
    for set in sets {
        if set.name.isEmpty || set.name.contains(where: \.isNewline) || !names.insert(set.name.lowercased()).inserted {
            broken.append("set name \(set.name.debugDescription) empty, on two lines or twice")
        }
        if !MapFile.programRange.contains(set.program) || !(set.bank.map(MapFile.bankRange.contains) ?? true) {
            broken.append("set \(set.name): program \(set.program) bank \(String(describing: set.bank))")
        }
        if !choices.insert("\(String(describing: set.bank)):\(set.program)").inserted {
            broken.append("program \(set.program) chooses two sets")
        }
        for channel in set.channels where !(0...15).contains(channel) || !channels.insert(channel).inserted {
            broken.append("channel \(channel) out of range or in two sets")
        }
        if (set.map == nil) == (set.file == nil) { broken.append("set \(set.name): both or neither of map and file") }
        if let own = set.map, !own.sets.isEmpty { broken.append("set \(set.name) has sets of its own") }
    }
    return broken
}
