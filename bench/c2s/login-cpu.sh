#!/usr/bin/env bash
# Where the CPU of a login goes, per process and thread, for one or more builds of this server, alternated:
# each try starts a fresh server (the kit's copy of config.example.yml without mod_mam, the given `workers`),
# provisions N accounts through the API and logs them in with the kit's generator (xmppbench idle: PLAIN,
# bind, session, presence; 100 in flight), as the kit's c2s-idle does. It prints the login rate, the server's
# CPU per login (the kit's figure) and each process's main-thread and other-thread CPU per login. Not a
# comparison with ejabberd (bench/side-by-side/run.ts is): what one build or setting costs against another
# in the same minutes, since this kind of VM drifts between runs more than most changes move.
#
#   bench/c2s/login-cpu.sh N ROUNDS ROOT:WORKERS [ROOT:WORKERS ...]
#     N         accounts that log in per try (5000)
#     ROUNDS    how many times the list of builds is gone through
#     ROOT      a checkout of this project, built; WORKERS its `workers` option (1, 2, auto)
#   PASSWORD_FORMAT=plain for auth_password_format: plain (scram, the kit's default, otherwise)
#   WARM=1 logs N other accounts in first on the same server (the JIT and caches warm, the accounts fresh)
#   WAVES=K logs K waves of N fresh accounts in on the same server, one after another (each logs out after
#           a second), and reports each: how many logins V8's compiler takes to settle, and what an idle
#           spell between waves costs the next one
#   NODE_FLAGS="--flag ..." starts the server's node with these flags (V8's too); its workers inherit them
#
# Uses the kit's ports (45222, 45280, 45281): nothing else may listen there.
set -euo pipefail
N=$1; ROUNDS=$2; shift 2
HERE=$(cd "$(dirname "$0")/../.." && pwd)
KIT=${KIT:-$HERE/../shared/bench-kit}
LIB=$KIT/bench/lib
WORK=$(mktemp -d /tmp/login-cpu.XXXXXX)
SRC_IPS=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5
server=""
cleanup() { [ -n "$server" ] && kill -TERM "$server" 2>/dev/null; sleep 1; rm -rf "$WORK"; }
trap cleanup EXIT

configure() { # root workers
  node --input-type=module - "$1" "$2" "$KIT/bench/targets/service/config.yml" "$WORK" "${PASSWORD_FORMAT:-}" <<'JS'
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const [root, workers, kitConfig, work, format] = process.argv.slice(2);
const { parse, stringify } = createRequire(root + '/package.json')('yaml');
const config = parse(readFileSync(kitConfig, 'utf8'));
const example = parse(readFileSync(root + '/config.example.yml', 'utf8'));
config.workers = /^\d+$/.test(workers) ? Number(workers) : workers;
config.modules = example.modules;
delete config.modules.mod_mam;
if (format) config.auth_password_format = format;
config.data_dir = work + '/data';
writeFileSync(work + '/config.yml', stringify(config));
JS
}

ticks() { # pid... -> "pid main|other ticks" per thread
  local p t
  for p in "$@"; do for t in /proc/"$p"/task/*; do
    [ "${t##*/}" = "$p" ] && echo "$p main $(awk '{print $14+$15}' "$t/stat")" || echo "$p other $(awk '{print $14+$15}' "$t/stat")"
  done; done
}

try() { # root workers
  local root=$1 workers=$2 pids kids
  if curl -s -o /dev/null "http://127.0.0.1:45280/"; then echo "port 45280 is taken: stop what listens there first" >&2; exit 1; fi
  rm -rf "$WORK/data"; configure "$root" "$workers"
  ( ulimit -n "$(ulimit -Hn)"; exec node ${NODE_FLAGS:-} "$root/cli/dist/servicectl.js" foreground --config "$WORK/config.yml" > "$WORK/server.log" 2>&1 < /dev/null ) & server=$!
  for _ in $(seq 300); do curl -s -o /dev/null -X POST -d '{}' http://127.0.0.1:45280/api/status && break; sleep 0.1; done
  node "$root/cli/dist/servicectl.js" --config "$WORK/config.yml" started > /dev/null
  kids=$(cat /proc/"$server"/task/*/children | tr -s ' \n' ' '); pids="$server $kids"
  # WARM=1 is two waves with the second reported; WAVES=K reports each of K waves.
  local waves=${WAVES:-1} shown=1 wave; [ -n "${WARM:-}" ] && [ -z "${WAVES:-}" ] && { waves=2; shown=2; }
  node "$LIB/httpbench.mjs" register --base http://127.0.0.1:45280/api --domain localhost --user-fmt 'bench%d' --pass benchpass \
    --first 1 --count "$((waves * N))" --conc 16 --server-pid "$server" --out "$WORK/provision.json" > /dev/null 2>&1
  for wave in $(seq "$waves"); do
    sleep 3
    ticks $pids > "$WORK/before"
    node "$LIB/xmppbench.mjs" idle --host 127.0.0.1 --port 45222 --domain localhost --user-fmt 'bench%d' --pass benchpass --src-ips $SRC_IPS \
      --server-pid "${pids// /,}" --first "$(( (wave - 1) * N + 1 ))" --count "$N" --login-conc 100 --connect-conc 4 --settle 1 --hold 1 --max-secs 300 --out "$WORK/idle.json" > /dev/null 2>&1
    ticks $pids > "$WORK/after"
    [ "$wave" -ge "$shown" ] || continue
    python3 - "$WORK" "$N" "$root" "$workers" "${WAVES:+ wave $wave}" <<'PY'
import collections, json, os, sys
work, n, root, workers, label = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
hz = os.sysconf('SC_CLK_TCK')
def load(name):
    c = collections.Counter()
    for line in open(f'{work}/{name}'):
        pid, kind, ticks = line.split()
        c[(pid, kind)] += int(ticks)
    return c
a, b = load('before'), load('after')
login = json.load(open(f'{work}/idle.json'))['login']
procs = collections.OrderedDict()
for (pid, kind) in b:
    procs.setdefault(pid, {})[kind] = (b[(pid, kind)] - a[(pid, kind)]) * 1000 / hz / n
per = '  '.join(f"main {v.get('main', 0):.2f} other {v.get('other', 0):.2f}" for v in procs.values())
print(f"{root} workers={workers}{label}: {login['rate_per_s']} logins/s, {login['server_cpu_ms_per_login']} ms CPU/login; per process (primary first): {per}")
PY
  done
  kill -TERM "$server"; wait "$server" 2>/dev/null || true; server=""
}

echo "login-cpu: N=$N, $(nproc) vCPUs, $(node --version), password format ${PASSWORD_FORMAT:-scram}${WARM:+, warm server}${WAVES:+, $WAVES waves}${NODE_FLAGS:+, node $NODE_FLAGS}, $(date -u '+%Y-%m-%d %H:%M UTC')"
for _ in $(seq "$ROUNDS"); do
  for spec in "$@"; do try "${spec%:*}" "${spec##*:}"; done
done
