#ifndef BELLKEYS_CQRENCODE_SHIM_H
#define BELLKEYS_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
