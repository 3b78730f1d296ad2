/**
 * The embedded database's commands at scale, as an operator sees them (issue 19): 100 000 accounts with
 * rosters (5 contacts each, each in a group) on the default SQLite storage, a client connected throughout.
 * `backup` runs through servicectl's control socket (its progress frames come before the result); then
 * accounts are deleted and `restore` runs through the real servicectl on a pseudo-terminal, whose progress
 * bar must show the restored rows growing before the result; everything comes back, the client goes on.
 * `dump` and `load` run at the same scale. Each command's time and the server process's peak memory (RSS,
 * sampled every 20 ms) and the longest the event loop waited are printed as a `FIGURES …` line (docs/data.md
 * keeps them); no step may hold the event loop for a second.
 * EMBEDDED_SCALE_ACCOUNTS sets the number of accounts (default 100 000).
 */
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'chai';
import { servicectlOnTty } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { overControlSocket } from './support-embedded.js';

const ACCOUNTS = Number(process.env.EMBEDDED_SCALE_ACCOUNTS ?? 100_000);
const CONTACTS = 5;
const USERS_PER_STATEMENT = 10_000;

/** Runs `work` while sampling this process's RSS; its result, milliseconds and peak RSS in MiB. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; peakMiB: number; baseMiB: number; maxLoopDelayMs: number }> {
  const baseMiB = process.memoryUsage().rss / 1048576;
  let peak = baseMiB;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss / 1048576)), 20);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = performance.now();
  try {
    const result = await work();
    loop.disable();
    return {
      result,
      ms: Math.round(performance.now() - started),
      peakMiB: Math.round(Math.max(peak, process.memoryUsage().rss / 1048576)),
      baseMiB: Math.round(baseMiB),
      maxLoopDelayMs: Math.round(loop.max / 1e6),
    };
  } finally {
    clearInterval(sampler);
    loop.disable();
  }
}

/** The longest the event loop may be held by one step, even on a loaded machine (the steps take milliseconds). */
const MAX_LOOP_DELAY_MS = 1000;

describe('embedded database commands at scale (100 000 accounts with rosters)', function () {
  this.timeout(600_000);
  let t: TestServer;
  let alice: Client | undefined;
  const db = () => t.server.services.storage.db('sql');
  const count = async (table: string) => Number(((await db()(table).count({ n: '*' })) as Array<{ n: number }>)[0]!.n);
  const figures: Record<string, unknown> = {};
  let expected: Record<string, number> = {};

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_presence: {}, mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    await t.register('alice', 'localhost', 'alice-pw');
    await t.register('template', 'localhost', 'template-pw');
    // Accounts are copied from a registered one (the same SCRAM keys), in statements of 10 000, with their rosters.
    const columns = ((await db().raw('PRAGMA table_info(users)')) as Array<{ name: string }>).map((c) => c.name);
    const rest = columns.filter((c) => c !== 'username');
    for (let from = 0; from < ACCOUNTS; from += USERS_PER_STATEMENT) {
      const to = Math.min(ACCOUNTS, from + USERS_PER_STATEMENT) - 1;
      const range = `WITH RECURSIVE n(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM n WHERE i < ${to})`;
      await db().transaction(async (trx) => {
        await trx.raw(`${range} INSERT INTO users (username, ${rest.join(', ')}) SELECT 'user' || i, ${rest.map((c) => `u.${c}`).join(', ')} FROM n, users u WHERE u.host = 'localhost' AND u.username = 'template'`);
        for (let k = 1; k <= CONTACTS; k++) {
          const jid = `'user' || ((i + ${k}) % ${ACCOUNTS}) || '@localhost'`;
          await trx.raw(`${range} INSERT INTO roster_items (host, username, jid, nick, subscription) SELECT 'localhost', 'user' || i, ${jid}, 'Contact ${k}', 'both' FROM n`);
          await trx.raw(`${range} INSERT INTO roster_groups (host, username, jid, group_name) SELECT 'localhost', 'user' || i, ${jid}, 'Group ${k % 2}' FROM n`);
        }
      });
    }
    expected = { users: await count('users'), roster_items: await count('roster_items'), roster_groups: await count('roster_groups') };
    expect(expected.roster_items).to.equal(ACCOUNTS * CONTACTS);
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
  });

  after(async () => {
    console.log(`FIGURES ${JSON.stringify({ accounts: ACCOUNTS, contacts: CONTACTS, ...figures })}`);
    await stopAll(alice);
    await t?.stop();
  });

  const file = () => join(t.dir, 'scale.backup');

  it('backup: progress frames, then the result', async () => {
    const run = await measured(() => overControlSocket(t, 'backup', [file()]));
    const { progress, final } = run.result;
    expect(final.type, JSON.stringify(final)).to.equal('result');
    expect(progress.length).to.be.at.least(1);
    expect(progress.every((p, i) => i === 0 || p.label !== progress[i - 1]!.label || p.done >= progress[i - 1]!.done)).to.equal(true);
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(file()));
    figures.backup = { ms: run.ms, peakRssMiB: run.peakMiB, baseRssMiB: run.baseMiB, maxLoopDelayMs: run.maxLoopDelayMs, bytes: size };
    expect(run.maxLoopDelayMs, 'the event loop was held').to.be.below(MAX_LOOP_DELAY_MS);
  });

  it('restore through servicectl on a terminal: the bar grows, everything comes back, the client goes on', async () => {
    await db()('roster_groups').where('username', 'like', 'user1%').delete();
    await db()('roster_items').where('username', 'like', 'user1%').delete();
    await db()('users').where('username', 'like', 'user1%').delete();
    expect(await count('users')).to.be.below(expected.users!);
    const run = await measured(() => servicectlOnTty(t.configFile, 'restore', file()));
    const cli = run.result;
    expect(cli.code, cli.stdout + cli.stderr).to.equal(0);
    const drawings = cli.stdout.split('\r\x1b[2K');
    const result = drawings.pop()!;
    expect(result.replace(/\r/g, '')).to.match(/^Restored sql \(\d+ tables, \d+ rows\) from .*scale\.backup/);
    // "[#####-----] 42% 123000/1100012 rows restored 2s"
    const counts = drawings.map((d) => /^\[[#-]+\] \d+% (\d+)\/(\d+) rows restored/.exec(d)).filter((m): m is RegExpExecArray => m !== null).map((m) => Number(m[1]));
    const diagnostics = `restore took ${run.ms} ms; the terminal showed ${JSON.stringify(cli.stdout.slice(0, 1500))}`;
    expect(new Set(counts).size, diagnostics).to.be.at.least(2);
    expect(counts.every((c, i) => i === 0 || c >= counts[i - 1]!), diagnostics).to.equal(true);
    for (const [table, n] of Object.entries(expected)) expect(await count(table), table).to.equal(n);
    const roster = await alice!.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
    expect(roster.attrs.type).to.equal('result');
    figures.restore = { ms: run.ms, peakRssMiB: run.peakMiB, baseRssMiB: run.baseMiB, maxLoopDelayMs: run.maxLoopDelayMs };
    expect(run.maxLoopDelayMs, 'the event loop was held').to.be.below(MAX_LOOP_DELAY_MS);
  });

  it('dump and load at the same scale', async () => {
    const dumpFile = join(t.dir, 'scale.dump');
    const dumped = await measured(() => overControlSocket(t, 'dump', [dumpFile]));
    expect(dumped.result.final.type, JSON.stringify(dumped.result.final)).to.equal('result');
    await db()('users').where('username', 'like', 'user2%').delete();
    const loaded = await measured(() => overControlSocket(t, 'load', [dumpFile]));
    expect(loaded.result.final.type, JSON.stringify(loaded.result.final)).to.equal('result');
    for (const [table, n] of Object.entries(expected)) expect(await count(table), table).to.equal(n);
    figures.dump = { ms: dumped.ms, peakRssMiB: dumped.peakMiB, baseRssMiB: dumped.baseMiB, maxLoopDelayMs: dumped.maxLoopDelayMs };
    figures.load = { ms: loaded.ms, peakRssMiB: loaded.peakMiB, baseRssMiB: loaded.baseMiB, maxLoopDelayMs: loaded.maxLoopDelayMs };
    expect(dumped.maxLoopDelayMs, 'the event loop was held').to.be.below(MAX_LOOP_DELAY_MS);
    expect(loaded.maxLoopDelayMs, 'the event loop was held').to.be.below(MAX_LOOP_DELAY_MS);
  });
});
