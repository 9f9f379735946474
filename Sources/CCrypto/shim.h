#ifndef BELLKEYS_CCRYPTO_SHIM_H
#define BELLKEYS_CCRYPTO_SHIM_H
// libcrypto (OpenSSL) for the classroom's WebSocket handshake: EVP_Digest with EVP_sha1, and
// EVP_EncodeBlock (base64). Nothing secret is computed with it.
#include <openssl/evp.h>
#include <openssl/err.h>
#endif
