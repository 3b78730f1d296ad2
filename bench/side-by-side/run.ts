/**
 * The side-by-side run: the shared load kit's scenarios (../shared/bench-kit) against this server and against
 * Debian's ejabberd 23.01, back to back in one run on this machine, and one table of ratios (ours / ejabberd).
 * Absolute figures move 10–20 % between runs and machines; ratios from one run do not, which is why every
 * comparison with ejabberd in docs/performance.md comes from here.
 *
 *   npm run bench:side-by-side -- [--scenarios api-trivial,api-bulk,c2s-idle,c2s-chat,c2s-chat-mam] [--reps 1] [--quick]
 *                                 [--kit ../shared/bench-kit] [--workers auto|N]
 *   npm run bench:side-by-side -- --only c2s-chat-mam        (--only: the same as --scenarios)
 *
 * Needs the server built (npm run build), ejabberd installed (the kit's ejabberd/install.sh, as root) and wrk.
 * Each scenario runs against this server (bench/side-by-side/service.env, the kit's profile measuring every
 * worker process: servicectl foreground with the kit's copy of config.example.yml and the example's
 * `workers`, mod_mam left out), then against ejabberd (ejabberd-nomam for c2s-chat and muc-fanout: neither archives there),
 * each left stopped after. `c2s-chat-mam` is the kit's c2s-chat with the archive on in both servers (issue 16):
 * ours with config.example.yml's modules including mod_mam (`default: always`, on the default SQLite storage),
 * ejabberd with the kit's reference profile (`ejabberd`: mod_mam `default: always` on Mnesia). Writes bench/results/side-by-side-<time>/ (the kit's result directories,
 * side-by-side.md and side-by-side.json) and prints the table.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO, RESULTS_DIR, machineInfo } from '../api/lib.js';
import { Kit, OURS, format, median, type Summary } from './kit.js';

const { values: opts } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'api-trivial,api-bulk,c2s-idle,c2s-chat' },
    /** The same as --scenarios (`--only c2s-chat-mam`). */
    only: { type: 'string' },
    reps: { type: 'string', default: '1' },
    quick: { type: 'boolean', default: false },
    kit: { type: 'string', default: join(REPO, '../shared/bench-kit') },
    /** The `workers` option of the server's configuration; config.example.yml's by default. */
    workers: { type: 'string' },
    /**
     * This server's `auth_password_format`: `scram` (the default, as operators run it) or `plain`, the
     * storage of ejabberd's reference configuration (the logins goal "with the same password storage").
     */
    'password-format': { type: 'string', default: 'scram' },
  },
});

/** The server's configuration for the run: the kit's copy of config.example.yml, plus what the kit's copy lacks. */
const SVC_DIR = '/tmp/service-bench-sbs';
const kit = new Kit(opts.kit, SVC_DIR, 'side-by-side');
const KIT = kit.dir;
const log = (text: string) => console.error(`[side-by-side] ${text}`);

type Row = { figure: string; ejabberd: number | undefined; ours: number | undefined; better: 'higher' | 'lower'; digits?: number };

/**
 * Scenarios of this script that are a kit scenario under other conditions: c2s-chat-mam is the kit's
 * c2s-chat with the archive on in both servers.
 */
const KIT_SCENARIO: Record<string, string> = { 'c2s-chat-mam': 'c2s-chat' };
const WITH_MAM = new Set(['c2s-chat-mam']);

/**
 * The ejabberd profile the kit compares a scenario with: the reference (`ejabberd`, MAM on) for the
 * scenarios with the archive, without MAM for the other message scenarios, where this server leaves it out.
 */
const theirs = (scenario: string) => (WITH_MAM.has(scenario) ? 'ejabberd' : scenario === 'c2s-chat' || scenario === 'muc-fanout' ? 'ejabberd-nomam' : 'ejabberd');

/** Runs whose last try the kit found disturbed by other processes (summarized anyway, and flagged under the table). */
const disturbedRuns: string[] = [];

async function runScenario(scenario: string, profile: string, dir: string): Promise<Summary> {
  const name = `${profile === OURS ? 'service' : profile}-${scenario}`;
  const run = await kit.runScenario(KIT_SCENARIO[scenario] ?? scenario, profile, dir, { reps: opts.reps, quick: opts.quick, name, summarizeDisturbed: true });
  if (run.disturbed) disturbedRuns.push(`${scenario} against ${profile === OURS ? 'this server' : profile}`);
  return run.summary;
}

/** The figures of one scenario that the comparison keeps, ejabberd's and ours side by side. */
function figures(scenario: string, ejabberd: Summary, ours: Summary): Row[] {
  const rows: Row[] = [];
  const pair = (match: (r: Record<string, any>) => boolean, key: string) => [median(ejabberd.rows.find(match)?.[key]), median(ours.rows.find(match)?.[key])] as const;
  if (scenario === 'api-trivial') {
    for (const row of ours.rows) {
      const match = (r: Record<string, any>) => r.auth === row.auth && r.conc === row.conc;
      const [e, o] = pair(match, 'req_per_s');
      rows.push({ figure: `\`status\` req/s, ${row.auth}, c=${row.conc}`, ejabberd: e, ours: o, better: 'higher', digits: 0 });
      if (row.conc === 1) {
        const [ep, op] = pair(match, 'p99_ms');
        rows.push({ figure: `\`status\` p99 ms, ${row.auth}, c=1`, ejabberd: ep, ours: op, better: 'lower', digits: 3 });
      }
    }
  } else if (scenario === 'api-bulk') {
    for (const row of ours.rows) {
      const match = (r: Record<string, any>) => r.size === row.size;
      const [e, o] = pair(match, 'accounts_per_s');
      rows.push({ figure: `bulk \`register\` accounts/s up to ${row.size}`, ejabberd: e, ours: o, better: 'higher', digits: 0 });
      const [er, or] = pair(match, 'registered_users_ms');
      rows.push({ figure: `\`registered_users\` ms at ${row.size}`, ejabberd: er, ours: or, better: 'lower', digits: 1 });
    }
  } else if (scenario === 'c2s-idle') {
    for (const row of ours.rows) {
      const match = (r: Record<string, any>) => r.n === row.n;
      for (const [key, label, better, digits] of [
        ['logins_per_s', 'logins/s', 'higher', 0],
        ['server_cpu_ms_per_login', 'server CPU ms per login', 'lower', 2],
        ['kib_per_session', 'KiB per idle session', 'lower', 1],
      ] as const) {
        const [e, o] = pair(match, key);
        rows.push({ figure: `${label}, N=${row.n}`, ejabberd: e, ours: o, better, digits });
      }
    }
  } else if (scenario === 'c2s-chat' || scenario === 'c2s-chat-mam' || scenario === 'muc-fanout') {
    for (const [key, label] of [
      ['max_delivered_per_s_with_p99_lt_200ms', 'delivered/s at p99 < 200 ms'],
      ['max_delivered_per_s', 'max sustained delivered/s'],
    ] as const) {
      const [e, o] = pair(() => true, key);
      rows.push({ figure: `${scenario}: ${label}`, ejabberd: e, ours: o, better: 'higher', digits: 0 });
    }
  }
  return rows;
}

const ratio = (row: Row) => (row.ours === undefined || row.ejabberd === undefined || row.ejabberd === 0 ? undefined : row.ours / row.ejabberd);

async function main(): Promise<void> {
  kit.check();
  // The message scenarios run against ejabberd without MAM (ejabberd-nomam): this server runs without mod_mam
  // too; the others (API, logins, registration) send no messages, so the archive changes nothing there. The
  // -mam scenarios run both with the archive on, everything archived (default: always).
  const passwordFormat = opts['password-format'];
  if (passwordFormat !== 'scram' && passwordFormat !== 'plain') throw new Error(`--password-format is scram or plain, not ${passwordFormat}`);
  const topLevel = { auth_password_format: passwordFormat };
  const configure = (scenario: string) =>
    WITH_MAM.has(scenario)
      ? kit.writeServerConfig(opts.workers, { mod_mam: { default: 'always' } }, { mod_mam: { default: 'always' } }, [], topLevel)
      : kit.writeServerConfig(opts.workers, {}, {}, ['mod_mam'], topLevel);
  const { workers } = await configure('');
  log(`this server runs with workers: ${workers}, auth_password_format: ${passwordFormat}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = join(RESULTS_DIR, `side-by-side-${stamp}`);
  await mkdir(dir, { recursive: true });
  const rows: Row[] = [];
  const labels: string[] = [];
  for (const scenario of (opts.only ?? opts.scenarios).split(',').map((s) => s.trim()).filter(Boolean)) {
    await configure(scenario);
    const ours = await runScenario(scenario, OURS, dir);
    const ejabberd = await runScenario(scenario, theirs(scenario), dir);
    labels.push(`${scenario}: ours = ${ours.label}; ejabberd = ${ejabberd.label}`);
    rows.push(...figures(scenario, ejabberd, ours));
  }
  const machine = machineInfo();
  const lines = [
    `## Side by side with ejabberd 23.01 (${new Date().toISOString()})`,
    '',
    `${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, ${machine.os}, Node ${machine.node}; the kit at ${KIT}, ${opts.reps} repetition(s)${opts.quick ? ', --quick' : ''}; each scenario against this server, then ejabberd, back to back; this server's auth_password_format: ${passwordFormat}.`,
    '',
    '| figure | ejabberd 23.01 | this server | ratio (ours / ejabberd) | better |',
    '|---|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.figure} | ${format(r.ejabberd, r.digits)} | ${format(r.ours, r.digits)} | ${format(ratio(r), 2)} | ${r.better} |`),
    '',
    ...labels.map((l) => `- ${l}`),
    ...disturbedRuns.map((r) => `- **disturbed**: other processes used more than the kit allows (25 % of a core) during the last try of ${r}; its figures are what was measured anyway`),
    '',
    `Raw results: ${dir}`,
  ];
  await writeFile(join(dir, 'side-by-side.md'), `${lines.join('\n')}\n`);
  await writeFile(join(dir, 'side-by-side.json'), JSON.stringify({ date: new Date().toISOString(), machine, kit: KIT, reps: Number(opts.reps), quick: opts.quick, rows: rows.map((r) => ({ ...r, ratio: ratio(r) })) }, null, 1));
  console.log(lines.join('\n'));
}

main().catch((err: Error) => {
  console.error(`[side-by-side] ${err.message}`);
  process.exit(1);
});
