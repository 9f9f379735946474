#ifndef BELLKEYS_CSNDFILE_SHIM_H
#define BELLKEYS_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
