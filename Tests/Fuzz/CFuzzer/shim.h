#include <stddef.h>
#include <stdint.h>
// libFuzzer's driver (compiler-rt): runs the fuzzing loop, or replays the files named in argv,
// calling `callback` for each input. Linked in by -sanitize=fuzzer.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
