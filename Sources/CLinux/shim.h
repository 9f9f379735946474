#ifndef BELLKEYS_CLINUX_SHIM_H
#define BELLKEYS_CLINUX_SHIM_H
// Linux interfaces that Glibc's Swift module leaves out.
#include <sys/signalfd.h>
#endif
