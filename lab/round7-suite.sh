#!/bin/bash
# Round 3, session 7, first GPU call (one H100/H200): fresh sm_90a build, then every spec file through
# lab/round5-gpu.sh's speceach: the long files first, six at a time, then the memory- and timing-sensitive ones
# alone. Usage: OUT=/dir CUKERN_COMMIT=abc bash lab/round7-suite.sh
set -u
SERIAL="core reduce badinput streams multi_sanitize embed"
LONG="sort scan tensorcore hist map"
par=""; for s in $LONG; do par="$par spec/${s}_spec.lua"; done
for f in spec/*_spec.lua; do
  b=$(basename "$f" _spec.lua)
  case " $SERIAL $LONG " in *" $b "*) ;; *) par="$par $f" ;; esac
done
ser=""; for s in $SERIAL; do ser="$ser spec/${s}_spec.lua"; done
PAR_SPECS="$par" SPECS="$ser" NPAR=${NPAR:-6} T_EACH=${T_EACH:-300} HARD=${HARD:-585} DEADLINE=${DEADLINE:-560} \
  bash lab/round5-gpu.sh "build speceach"
