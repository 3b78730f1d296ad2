/**
 * servicectl shows progress for the synchronous purges (issue 16): delete_old_messages (offline storage),
 * delete_old_mam_messages (the message archive) and delete_expired_messages (offline messages past their
 * XEP-0079/XEP-0023 expiry) run through the real cli/dist/servicectl.js against the running server, on a
 * pseudo-terminal as an operator types them, with enough rows that the purge takes seconds.
 *
 * Rows are aged by hand in the server's database (nobody can wait 40 days): old rows that must go and
 * young ones that must stay. For each purge the test first measures how fast this machine deletes (a
 * small purge through servicectl's own control client, whose progress frames must come before its result),
 * then fills enough rows for about three seconds of work, so that servicectl's spinner (drawn once a call
 * has taken a second, cli/src/progress.ts) shows the count growing, before the result, whatever the
 * machine's speed. What must be gone is gone, what must stay stays, and the server's log says how many went.
 */
import { join } from 'node:path';
import { expect } from 'chai';
import { CONTROL_SOCKET } from '@service/kernel';
import { ControlClient } from '../../cli/src/client.js';
import { servicectlOnTty } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { xmppConfig } from '../support/xmpp.js';

const DAY_MS = 86_400_000;
const HOST = 'localhost';
/** Rows of the measuring purge, and the time the big purge should take on this machine. */
const PROBE_ROWS = 10_000;
const TARGET_MS = 3000;
/** Bounds on the big purge's rows, whatever the measure says (the least still gives several 1000-row steps). */
const MIN_ROWS = 20_000;
const MAX_ROWS = 600_000;
/** Rows the purges must keep: younger than `days`, or not yet expired. */
const KEPT = 25;
/** servicectl's spinner frames (cli/src/progress.ts). */
const SPINNER = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';

/** One purge: its command line, how it fills its table, what it leaves, and the label of its progress. */
interface Purge {
  readonly argv: string[];
  readonly table: string;
  /** `count` rows the purge must delete, and KEPT it must keep. */
  fill(count: number): Promise<void>;
  /** The rows the purge must delete, and those it must keep, left in the table. */
  left(): Promise<{ doomed: number; kept: number }>;
  /** The label its progress carries (servicectl prints it after the count). */
  readonly label: string;
  /** The server's log line saying how many went (its first group the count), where the purge writes one. */
  readonly logged?: RegExp;
}

describe('servicectl: progress of the synchronous purges', function () {
  this.timeout(300_000);
  let t: TestServer;
  const db = () => t.server.services.storage.db();
  const count = async (table: string, where: (q: any) => void) => {
    const query = db()(table);
    where(query);
    return Number(((await query.count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n);
  };
  /** Inserts rows in chunks, in one transaction per 20 000 (a purge's test should not wait on its fill). */
  const insert = async (table: string, rows: (i: number) => Record<string, unknown>, total: number) => {
    for (let start = 0; start < total; start += 20_000) {
      const chunk = Array.from({ length: Math.min(20_000, total - start) }, (_, i) => rows(start + i));
      await db().batchInsert(table, chunk, 500);
    }
  };

  const offlineRow = (i: number, createdAt: number, expiresAt: number | null) => ({
    host: HOST,
    username: `u${i % 50}`,
    from_jid: 'sender@localhost/r',
    created_at: createdAt,
    expires_at: expiresAt,
    xml: `<message xmlns="jabber:client" from="sender@localhost/r" to="u${i % 50}@localhost" type="chat"><body>offline ${i}</body></message>`,
  });
  const archiveRow = (i: number, createdAt: number, tag: string) => ({
    host: HOST,
    username: `u${i % 50}`,
    peer: 'peer@localhost',
    peer_full: 'peer@localhost/r',
    stanza_id: `${tag}-${i}`,
    created_at: createdAt,
    direction: i % 2 ? 'in' : 'out',
    kind: 'chat',
    xml: `<message xmlns="jabber:client" from="peer@localhost/r" to="u${i % 50}@localhost" type="chat"><body>archived ${i}</body></message>`,
    body: `archived ${i}`,
  });

  let fills = 0;
  const PURGES: Record<string, Purge> = {
    delete_old_messages: {
      argv: ['delete_old_messages', '30'],
      table: 'offline_messages',
      label: 'offline messages deleted',
      logged: /^deleted (\d+) offline messages older than 30 days$/,
      async fill(n) {
        const now = Date.now();
        await insert('offline_messages', (i) => offlineRow(i, now - 40 * DAY_MS + i, null), n);
        await insert('offline_messages', (i) => offlineRow(i, now - DAY_MS, null), KEPT);
      },
      left: async () => ({
        doomed: await count('offline_messages', (q) => q.where('created_at', '<', Date.now() - 30 * DAY_MS)),
        kept: await count('offline_messages', (q) => q.where('created_at', '>=', Date.now() - 30 * DAY_MS)),
      }),
    },
    delete_old_mam_messages: {
      argv: ['delete_old_mam_messages', 'all', '30'],
      table: 'mam_messages',
      label: 'archived messages deleted',
      logged: /^deleted (\d+) archived messages older than 30 days$/,
      async fill(n) {
        const now = Date.now();
        const tag = `f${++fills}`;
        await insert('mam_messages', (i) => archiveRow(i, now - 40 * DAY_MS + i, `${tag}-old`), n);
        await insert('mam_messages', (i) => archiveRow(i, now - DAY_MS, `${tag}-young`), KEPT);
      },
      left: async () => ({
        doomed: await count('mam_messages', (q) => q.where('created_at', '<', Date.now() - 30 * DAY_MS)),
        kept: await count('mam_messages', (q) => q.where('created_at', '>=', Date.now() - 30 * DAY_MS)),
      }),
    },
    delete_expired_messages: {
      argv: ['delete_expired_messages'],
      table: 'offline_messages',
      label: 'expired offline messages deleted',
      async fill(n) {
        const now = Date.now();
        // Expired a minute ago (stored a day ago), and some that expire tomorrow.
        await insert('offline_messages', (i) => offlineRow(i, now - DAY_MS, now - 60_000 - i), n);
        await insert('offline_messages', (i) => offlineRow(i, now - DAY_MS, now + DAY_MS), KEPT);
      },
      left: async () => ({
        doomed: await count('offline_messages', (q) => q.whereNotNull('expires_at').andWhere('expires_at', '<=', Date.now())),
        kept: await count('offline_messages', (q) => q.whereNotNull('expires_at').andWhere('expires_at', '>', Date.now())),
      }),
    },
  };

  before(async () => {
    t = await TestServer.start(xmppConfig({ mod_admin_extra: {}, mod_offline: {}, mod_mam: {} }));
  });
  beforeEach(async () => {
    await db()('offline_messages').delete();
    await db()('mam_messages').delete();
  });
  after(() => t?.stop());

  /** Runs the command through servicectl's control client; its progress frames and its final frame, in arrival order, and how long it took. */
  const overControlSocket = async (argv: string[]) => {
    const control = await ControlClient.connect(join(t.dir, 'data', CONTROL_SOCKET));
    const frames: Array<{ type: string; done?: number; total?: number; label?: string }> = [];
    const started = Date.now();
    try {
      const final = await control.request({ op: 'call', command: argv[0]!, argv: argv.slice(1) }, { progress: (done, total, label) => frames.push({ type: 'progress', done, total, label }) });
      frames.push({ type: final.type });
    } finally {
      control.close();
    }
    return { frames, ms: Date.now() - started };
  };

  for (const [name, purge] of Object.entries(PURGES)) {
    it(`${name}: the count grows in servicectl on a terminal before the result, and the rows are gone`, async () => {
      // 1. How fast this machine purges: PROBE_ROWS rows, through the control socket servicectl uses.
      await purge.fill(PROBE_ROWS);
      const probe = await overControlSocket(purge.argv);
      expect(probe.frames.at(-1), JSON.stringify(probe.frames)).to.deep.equal({ type: 'result' });
      const steps = probe.frames.filter((f) => f.type === 'progress');
      // The first report is never held back (the server sends one per 100 ms at most); every one comes before the result.
      expect(steps.length, `${name} sent no progress to servicectl: ${JSON.stringify(probe.frames)}`).to.be.at.least(1);
      for (const step of steps) {
        expect(step.label).to.equal(purge.label);
        expect(step.done).to.be.within(0, PROBE_ROWS);
      }
      expect(steps.every((s, i) => i === 0 || s.done! >= steps[i - 1]!.done!), JSON.stringify(steps)).to.equal(true);
      expect(await purge.left()).to.deep.equal({ doomed: 0, kept: KEPT });

      // 2. Enough rows for about TARGET_MS of work on this machine, purged by the real servicectl on a terminal.
      await db()(purge.table).delete();
      const rows = Math.min(MAX_ROWS, Math.max(MIN_ROWS, Math.ceil(((TARGET_MS / Math.max(probe.ms, 1)) * PROBE_ROWS) / 1000) * 1000));
      await purge.fill(rows);
      const mark = t.logs.length;
      const started = Date.now();
      const cli = await servicectlOnTty(t.configFile, '--json', ...purge.argv);
      const took = Date.now() - started;
      expect(cli.code, cli.stdout + cli.stderr).to.equal(0);
      // What the terminal got: each drawing starts by clearing the line; the last clear ends the progress, then the result.
      const drawings = cli.stdout.split('\r\x1b[2K');
      const result = drawings.pop()!;
      expect(result.replace(/\r/g, ''), JSON.stringify(cli.stdout.slice(-400))).to.equal('0\n');
      const counts = drawings
        // "⠋ delete_old_messages 161000 offline messages deleted 1s" (the seconds' "s" may be cut at the terminal's width).
        .map((d) => new RegExp(`^[${SPINNER}] ${name} (\\d+) ${purge.label} \\d+s?$`).exec(d))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]));
      const diagnostics = `${rows} rows in ${took} ms; the terminal showed: ${JSON.stringify(cli.stdout.slice(0, 2000))}`;
      // Several steps, the count growing by whole batches, never past what there was to delete.
      expect(new Set(counts).size, diagnostics).to.be.at.least(2);
      expect(counts.every((c, i) => i === 0 || c >= counts[i - 1]!), diagnostics).to.equal(true);
      expect(counts.every((c) => c > 0 && c <= rows), diagnostics).to.equal(true);
      expect(await purge.left()).to.deep.equal({ doomed: 0, kept: KEPT });
      if (purge.logged) {
        const said = t.logs.slice(mark).map((l) => purge.logged!.exec(String(l.msg))).find((m) => m);
        expect(said && Number(said[1]), `the server's log after the purge: ${JSON.stringify(t.logs.slice(mark))}`).to.equal(rows);
      }
    });
  }
});
