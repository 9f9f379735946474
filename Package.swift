// swift-tools-version: 6.0
import PackageDescription

// The AVX2 build of the engine's four-voice mixing loop (Sources/BellkeysWideMix, a link to
// Sources/BellkeysEngine/Voices/MixLoops.swift): compiled for Haswell-class x86-64 CPUs (x86-64-v3),
// used only where BellkeysSystem's wideMixingAvailable() finds such a CPU. Elsewhere it is built
// plainly and never called.
// (-Xcc -march: Swift compiles for the C importer's target CPU, and Swift 6.0's driver turns
// -target-cpu into a -mcpu its clang refuses for x86-64.)
// The manifest runs on the build machine: a cross build for another CPU (Tools/trixie-build
// arm64 --cross) says so in BELLKEYS_CROSS_ARCH, and gets no x86 flags.
#if arch(x86_64)
let wideMixSettings: [SwiftSetting] =
    Context.environment["BELLKEYS_CROSS_ARCH"] == nil ? [.unsafeFlags(["-Xcc", "-march=haswell"])] : []
#else
let wideMixSettings: [SwiftSetting] = []
#endif

let package = Package(
    name: "bellkeys",
    products: [
        .executable(name: "bellkeys", targets: ["bellkeys"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        // C libraries, found through pkg-config (Debian: libsndfile1-dev, libsamplerate0-dev).
        .systemLibrary(
            name: "CSndFile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(
            name: "CSampleRate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // The classroom's QR code (Debian: libqrencode-dev).
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // Linux headers that the Glibc module does not cover (signalfd).
        .systemLibrary(name: "CLinux"),
        // libjack, loaded at run time (dlopen): nothing of JACK is needed to build or to run
        // through ALSA.
        .target(name: "CJack", linkerSettings: [.linkedLibrary("dl")]),

        // The instrument model that the readers build and the engine plays: instruments, keys
        // and regions, sets, the sample bank, the events the engine takes, the channel filter,
        // the room a map chooses. Pure Swift: no Foundation, no C, no I/O, no threads.
        .target(name: "BellkeysModel"),
        // Everything the render thread runs (RT), and the lock-free hand-overs it shares with
        // the control thread. Pure Swift: no Foundation, no C.
        .target(name: "BellkeysEngine", dependencies: ["BellkeysModel", "BellkeysWideMix"]),
        // The mixing loop again, compiled for AVX2 (see wideMixSettings above). Pure Swift.
        .target(name: "BellkeysWideMix", swiftSettings: wideMixSettings),
        // The control thread's logic, which every live input plays through: the player, arrival
        // stamps, held notes, the phrase loop, MIDI messages. Pure Swift, no I/O.
        .target(name: "BellkeysControl", dependencies: ["BellkeysModel", "BellkeysEngine"]),
        // The computer keyboard and the on-screen piano: key decoding, layout, drawing. Pure Swift.
        .target(name: "BellkeysTerminal"),
        // File formats (map JSON, SFZ, SoundFont, Standard MIDI Files, settings files), read into
        // the model. Pure Swift, no Foundation, no C, no I/O.
        .target(name: "BellkeysFormats", dependencies: ["BellkeysModel"]),
        // The classroom: what pupils' browsers may say, and the limits on them.
        .target(name: "BellkeysClassroom", dependencies: ["BellkeysModel", "BellkeysFormats"]),
        // The system: files, the clock, threads, signals, the raw terminal, the CPU (Glibc, Linux).
        .target(name: "BellkeysSystem", dependencies: ["BellkeysFormats", "CLinux"]),
        // Instrument loading: sample files decoded (libsndfile) and resampled (libsamplerate), a
        // SoundFont's samples, stored into the bank after the formats module's compile step.
        .target(
            name: "BellkeysLoading",
            dependencies: ["BellkeysModel", "BellkeysFormats", "BellkeysSystem", "CSndFile", "CSampleRate"]),
        // MIDI input: the ALSA sequencer client (JACK's MIDI port is the JACK client's, in BellkeysAudio).
        .target(name: "BellkeysMIDI", dependencies: ["BellkeysControl", "BellkeysSystem", "CALSA"]),
        // The audio drivers and their real-time sides: ALSA PCM and the render thread, JACK (its
        // audio ports and MIDI port, one client), the recorder, sound files written.
        .target(
            name: "BellkeysAudio",
            dependencies: [
                "BellkeysModel", "BellkeysEngine", "BellkeysControl", "BellkeysFormats", "BellkeysSystem",
                "CALSA", "CJack", "CSndFile",
            ]),
        // The classroom's server: sockets, HTTP and WebSocket I/O, the link to the player, the
        // phones as a live input (WebInput), the QR code.
        .target(
            name: "BellkeysClassroomServer",
            dependencies: ["BellkeysModel", "BellkeysControl", "BellkeysClassroom", "BellkeysSystem", "CQREncode"]),
        // The live session's inputs (MIDI keyboards through the sequencer, JACK MIDI, the computer
        // keyboard), the console and the control thread's poll loop, over interfaces the tests
        // fake (Tests/BellkeysLiveTests).
        .target(
            name: "BellkeysLive",
            dependencies: ["BellkeysModel", "BellkeysEngine", "BellkeysControl", "BellkeysTerminal"]),
        // The command line: parse, wire, report.
        .executableTarget(
            name: "bellkeys",
            dependencies: [
                "BellkeysModel", "BellkeysEngine", "BellkeysControl", "BellkeysFormats", "BellkeysTerminal",
                "BellkeysClassroom", "BellkeysSystem", "BellkeysLoading", "BellkeysMIDI", "BellkeysAudio",
                "BellkeysClassroomServer", "BellkeysLive",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Generates Samples/: the 13 bells and the demo MIDI file. Run: swift run make-bells
        .executableTarget(
            name: "make-bells", dependencies: ["BellkeysAudio", "BellkeysFormats"],
            path: "Tools/make-bells"),

        // Mixing throughput of the engine alone. Run: swift run -c release engine-throughput
        .executableTarget(
            name: "engine-throughput",
            dependencies: ["BellkeysModel", "BellkeysEngine", "BellkeysSystem", "BellkeysLoading"],
            path: "Benchmarks/EngineThroughput"),
        // The reverb's cost, loud and on a decaying tail. Run: swift run -c release reverb-cost
        .executableTarget(
            name: "reverb-cost",
            dependencies: ["BellkeysModel", "BellkeysEngine", "BellkeysSystem", "BellkeysLoading"],
            path: "Benchmarks/ReverbCost"),

        // Fuzzing (Tests/Fuzz/run): the rules every input must keep, and one libFuzzer target
        // per file format. Built without libFuzzer, a target replays the files it is given.
        .target(
            name: "FuzzChecks",
            dependencies: ["BellkeysModel", "BellkeysEngine", "BellkeysFormats", "BellkeysClassroom", "CFuzzer"],
            path: "Tests/Fuzz/Checks"),
        .systemLibrary(name: "CFuzzer", path: "Tests/Fuzz/CFuzzer"),
        .executableTarget(name: "fuzz-midi-file", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/MIDIFile"),
        .executableTarget(name: "fuzz-map-file", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/MapFile"),
        .executableTarget(name: "fuzz-sfz-file", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/SFZFile"),
        .executableTarget(name: "fuzz-sf2-file", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/SF2File"),
        .executableTarget(name: "fuzz-pupil-message", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/PupilMessage"),
        .executableTarget(name: "fuzz-settings-file", dependencies: ["FuzzChecks"], path: "Tests/Fuzz/SettingsFile"),

        // Test-only: counts malloc calls on the calling thread (glibc interposition).
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // Test-only: engines over synthetic samples, for the engine's and the control side's tests.
        .target(
            name: "EngineTestSupport", dependencies: ["BellkeysModel", "BellkeysEngine", "BellkeysControl"],
            path: "Tests/EngineTestSupport"),
        .testTarget(
            name: "BellkeysEngineTests",
            dependencies: [
                "BellkeysModel", "BellkeysEngine", "BellkeysControl", "EngineTestSupport", "AllocationCounter",
            ]),
        .testTarget(
            name: "BellkeysControlTests",
            dependencies: ["BellkeysControl", "BellkeysModel", "BellkeysEngine", "EngineTestSupport"]),
        .testTarget(name: "BellkeysFormatsTests", dependencies: ["BellkeysFormats", "BellkeysModel", "FuzzChecks"]),
        .testTarget(
            name: "BellkeysClassroomTests",
            dependencies: ["BellkeysClassroom", "BellkeysModel", "BellkeysFormats"]),
        .testTarget(name: "BellkeysTerminalTests", dependencies: ["BellkeysTerminal"]),
        .testTarget(
            name: "BellkeysLoadingTests",
            dependencies: [
                "BellkeysLoading", "BellkeysSystem", "BellkeysAudio", "BellkeysModel", "BellkeysEngine",
                "BellkeysFormats", "AllocationCounter", "EngineTestSupport", "FuzzChecks", "CSndFile",
            ]),
        .testTarget(name: "BellkeysMIDITests", dependencies: ["BellkeysMIDI", "BellkeysControl", "CALSA"]),
        .testTarget(
            name: "BellkeysAudioTests",
            dependencies: [
                "BellkeysAudio", "BellkeysModel", "BellkeysEngine", "BellkeysControl", "AllocationCounter",
            ]),
        .testTarget(
            name: "BellkeysLiveTests",
            dependencies: [
                "BellkeysLive", "BellkeysModel", "BellkeysControl", "BellkeysEngine", "BellkeysTerminal",
                "EngineTestSupport",
            ]),
        .testTarget(
            name: "BellkeysClassroomServerTests",
            dependencies: [
                "BellkeysClassroomServer", "BellkeysClassroom", "BellkeysModel", "BellkeysControl", "BellkeysEngine",
                "EngineTestSupport",
            ]),
        // Runs the built `bellkeys` binary as a user would.
        .testTarget(
            name: "CommandLineTests",
            dependencies: [
                "bellkeys", "BellkeysFormats", "BellkeysSystem", "BellkeysLoading", "BellkeysAudio",
                "EngineTestSupport", "FuzzChecks", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
    ]
)
