#ifndef BELLKEYS_CSAMPLERATE_SHIM_H
#define BELLKEYS_CSAMPLERATE_SHIM_H
#include <samplerate.h>
#endif
