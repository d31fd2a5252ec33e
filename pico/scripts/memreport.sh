#!/bin/sh
# Prints the RAM of each pool of a weft-pico configuration.
# usage: memreport.sh NM OBJECT   (OBJECT = src/mem/memreport.c compiled with that configuration)
NM=${1:-nm}
OBJ=$2
"$NM" -S -t d "$OBJ" | awk '
  /zp_mem_/ {
    name = $4; sub(/^zp_mem_/, "", name); size = $2 + 0
    if (name == "total_sessions") sessions = size; else { parts[name] = size; order[n++] = name }
  }
  END {
    printf "weft-pico memory report (static RAM, bytes)\n"
    for (i = 0; i < n; i++) printf "  %-20s %7d\n", order[i], parts[order[i]]
    pool = ("block_pool" in parts) ? parts["block_pool"] : 0
    printf "  %-20s %7d  (sessions, with the buffers and tables above)\n", "session pool", sessions
    printf "  %-20s %7d\n", "TOTAL", sessions + pool
    printf "ram_total=%d\n", sessions + pool
  }'
