#!/usr/bin/env bash
# Two builds of this server answering `POST /api/status`, measured against each other in one run: the per-request
# cost of a change, which is smaller than what this kind of VM drifts between runs (the same Koa server answers
# 26k req/s, then 13k, seconds apart). Both servers run at once in one process each (workers: 1), pinned to
# core 0; wrk runs on core 1. Short phases alternate between the two (the order flips every round), and the
# figure is the median of the rounds' ratios new/base, each ratio taken from two phases seconds apart.
#
#   bench/api/ab-builds.sh BASE_ROOT NEW_ROOT [MODE] [ROUNDS] [SECONDS]
#     BASE_ROOT, NEW_ROOT  two checkouts of this project, each built (npm run build), e.g. a `git worktree`
#                          of the previous commit and this one
#     MODE                 none (default), basic or bearer: the authentication of every request
#     ROUNDS, SECONDS      12 rounds of 2-second phases by default; 16 connections (CONNS=…)
#
# Configuration: the kit's copy of config.example.yml (../shared/bench-kit/bench/targets/service/config.yml,
# the modules operators run) with `workers: 1`, the base on ports 45322/45380/45381. Not a comparison with
# ejabberd (bench/side-by-side/run.ts is); the result says how much one build answers faster than the other.
set -euo pipefail
BASE_ROOT=$(cd "$1" && pwd); NEW_ROOT=$(cd "$2" && pwd); MODE=${3:-none}; ROUNDS=${4:-12}; SECS=${5:-2}; CONNS=${CONNS:-16}
KIT_CONFIG=${KIT_CONFIG:-$NEW_ROOT/../shared/bench-kit/bench/targets/service/config.yml}
WORK=$(mktemp -d /tmp/ab-builds.XXXXXX)
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }

sed "s#^data_dir:.*#data_dir: $WORK/new-data#" "$KIT_CONFIG" > "$WORK/new.yml"; echo "workers: 1" >> "$WORK/new.yml"
sed "s/45222/45322/; s/45280/45380/; s/45281/45381/; s#^data_dir:.*#data_dir: $WORK/base-data#" "$KIT_CONFIG" > "$WORK/base.yml"; echo "workers: 1" >> "$WORK/base.yml"
cat > "$WORK/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
LUA

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
start() { # root config port
  # A server left on the port would answer in this one's place.
  if curl -s -o /dev/null "http://127.0.0.1:$3/"; then echo "port $3 is taken: stop what listens there first" >&2; exit 1; fi
  (cd "$1" && exec taskset -c 0 node cli/dist/servicectl.js foreground --config "$2" > "$WORK/$3.log" 2>&1) & pids+=($!)
  for _ in $(seq 150); do curl -s -o /dev/null -X POST -d '{}' "http://127.0.0.1:$3/api/status" && return 0; sleep 0.2; done
  echo "the server of $1 did not start, see $WORK/$3.log" >&2; exit 1
}
start "$BASE_ROOT" "$WORK/base.yml" 45380
start "$NEW_ROOT" "$WORK/new.yml" 45280

header() { # root config
  local ctl=(node "$1/cli/dist/servicectl.js" --config "$2")
  case $MODE in
    none) echo "X-Auth: none";;
    basic) "${ctl[@]}" register admin localhost adminpass > /dev/null 2>&1 || true
           echo "Authorization: Basic $(printf admin@localhost:adminpass | base64 -w0)";;
    bearer) "${ctl[@]}" register admin localhost adminpass > /dev/null 2>&1 || true
            echo "Authorization: Bearer $("${ctl[@]}" --json oauth_issue_token admin@localhost 3600 service:admin \
              | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["token"] if isinstance(d,dict) else d[0])')";;
    *) echo "unknown mode $MODE (none, basic, bearer)" >&2; exit 2;;
  esac
}
BASE_H=$(header "$BASE_ROOT" "$WORK/base.yml"); NEW_H=$(header "$NEW_ROOT" "$WORK/new.yml")
rps() { taskset -c 1 wrk -t1 -c"$CONNS" -d"$1" -s "$WORK/post.lua" -H "$2" "http://127.0.0.1:$3/api/status" | awk '/Requests\/sec/{print $2}'; }
rps 4s "$BASE_H" 45380 > /dev/null; rps 4s "$NEW_H" 45280 > /dev/null   # warm-up, not counted

ratios=()
for r in $(seq "$ROUNDS"); do
  if (( r % 2 )); then n=$(rps "${SECS}s" "$NEW_H" 45280); b=$(rps "${SECS}s" "$BASE_H" 45380)
  else b=$(rps "${SECS}s" "$BASE_H" 45380); n=$(rps "${SECS}s" "$NEW_H" 45280); fi
  ratios+=("$n/$b")
  echo "round $r: new $n req/s, base $b req/s"
done
python3 - "$MODE" "${ratios[@]}" <<'PY'
import statistics, sys
mode, pairs = sys.argv[1], [tuple(map(float, p.split('/'))) for p in sys.argv[2:]]
q = sorted(n / b for n, b in pairs)
print(f"{mode}: new/base median {statistics.median(q):.3f}, quartiles {q[len(q) // 4]:.3f}-{q[3 * len(q) // 4]:.3f}, {len(q)} rounds")
PY
