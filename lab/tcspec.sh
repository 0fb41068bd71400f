#!/usr/bin/env bash
# The tensor-core and Hopper specs alone (spec/tensorcore_spec.lua), for a quick check of matmul changes.
cd "$(dirname "$0")/.."
timeout 140 sh spec/run.sh spec/tensorcore_spec.lua 2>&1 | tee ${OUT:+$OUT/tcspec.txt} | tail -40
