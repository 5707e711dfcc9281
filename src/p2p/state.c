/*
 * state.c - the point-to-point layer's process state (state.h).
 */
#include "p2p/state.h"

fmpl_state_t fmpl_g;
