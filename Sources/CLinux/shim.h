#ifndef BELLKEYS_CLINUX_SHIM_H
#define BELLKEYS_CLINUX_SHIM_H
// Linux interfaces that Glibc's Swift module leaves out.
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

// Terminal restoration that also runs when the process dies of a fatal signal (a crash): the
// saved settings and the bytes that undo bellkeys' terminal modes, kept where a signal handler
// can reach them without Swift. Only async-signal-safe calls (write, tcsetattr, sigaction,
// raise). One terminal per process; used by BellkeysSystem's Terminal.swift only.
// (Function-local statics: Swift's importer emits those of inline functions, but not a
// header's file-scope statics.)
struct bellkeys_terminal_state {
    int fd;
    struct termios saved;
    char undo[128];
    struct sigaction previous[32];
};

static inline struct bellkeys_terminal_state *bellkeys_terminal(void) {
    static struct bellkeys_terminal_state state = {.fd = -1};
    return &state;
}

static inline void bellkeys_terminal_restore(void) {
    if (bellkeys_terminal()->fd < 0) return;
    int fd = bellkeys_terminal()->fd;
    bellkeys_terminal()->fd = -1;
    size_t n = strlen(bellkeys_terminal()->undo);
    if (n > 0) { ssize_t w = write(fd, bellkeys_terminal()->undo, n); (void)w; }
    tcsetattr(fd, TCSAFLUSH, &bellkeys_terminal()->saved);
}

static inline void bellkeys_terminal_on_fatal_signal(int signal) {
    bellkeys_terminal_restore();
    // Hand the signal to whoever had it before (the Swift runtime's crash report, or the
    // default action); returning re-runs the faulting instruction, or the raise delivers it.
    sigaction(signal, &bellkeys_terminal()->previous[signal], NULL);
    if (signal == SIGABRT || signal == SIGQUIT) raise(signal);
}

static inline int bellkeys_terminal_set_undo(const char *bytes) {
    if (strlen(bytes) >= sizeof bellkeys_terminal()->undo) return -1;
    strcpy(bellkeys_terminal()->undo, bytes);
    return 0;
}

/// Saves `fd`'s settings to be restored by `bellkeys_terminal_restore`, also on a crash.
static inline int bellkeys_terminal_save(int fd) {
    if (tcgetattr(fd, &bellkeys_terminal()->saved) != 0) return -1;
    bellkeys_terminal()->fd = fd;
    const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGQUIT};
    for (unsigned i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = bellkeys_terminal_on_fatal_signal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(fatal[i], &action, &bellkeys_terminal()->previous[fatal[i]]);
    }
    return 0;
}

/// The saved settings with line editing, echo, signal keys and flow control off.
static inline int bellkeys_terminal_make_raw(int fd) {
    struct termios raw = bellkeys_terminal()->saved;
    raw.c_lflag &= ~(ICANON | ECHO | ISIG | IEXTEN);
    raw.c_iflag &= ~(IXON | ICRNL | INLCR);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    return tcsetattr(fd, TCSAFLUSH, &raw);
}
// Whether this CPU and kernel run x86-64-v3 code (AVX, AVX2, BMI1, BMI2, F16C, FMA, LZCNT,
// MOVBE, with the registers' state saved by the kernel): what the engine's wide mixing loop,
// compiled for Haswell, uses (a plain loop uses nothing of Haswell beyond these). 0 on other
// architectures.
static inline int bellkeys_cpu_runs_x86_64_v3(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
#if __clang_major__ >= 18
    return __builtin_cpu_supports("x86-64-v3") ? 1 : 0;
#else
    // Clang 17 (Swift 6.0's) has no "x86-64-v3" here: its vector and bit-manipulation parts,
    // which every CPU with them also has the rest of (F16C, LZCNT, MOVBE: Haswell and later).
    return (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi")
            && __builtin_cpu_supports("bmi2")) ? 1 : 0;
#endif
#else
    return 0;
#endif
}

#endif
