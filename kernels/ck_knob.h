/*
 * ck_knob.h — a ladder's tuning knob from the environment (CUKERN_MM_CFG, CUKERN_MM_SK, CUKERN_LU_PANEL_COLS, ...):
 * the whole value must be a decimal integer in [lo, hi], else the default (unset, empty, out of range, or text).
 * For the probes and sweeps in lab/ that force a configuration; the launchers read each knob where they need it.
 */
#ifndef CK_KNOB_H
#define CK_KNOB_H

#include <stdlib.h>

static inline int ck_knob(const char *name, int lo, int hi, int dflt) {
  const char *s = getenv(name);
  if (!s || !*s) return dflt;
  char *end;
  const long v = strtol(s, &end, 10);
  return *end == 0 && v >= lo && v <= hi ? (int)v : dflt;
}

#endif
