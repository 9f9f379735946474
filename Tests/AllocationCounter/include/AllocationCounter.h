#ifndef BELLKEYS_ALLOCATION_COUNTER_H
#define BELLKEYS_ALLOCATION_COUNTER_H
/// Starts counting heap allocations made by the calling thread.
void bellkeys_allocations_start(void);
/// Stops counting and returns how many allocations the calling thread made since start.
long bellkeys_allocations_stop(void);
#endif
