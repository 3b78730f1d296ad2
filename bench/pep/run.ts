/**
 * bench/pep (issue 17): personal eventing (mod_pubsub, XEP-0163) under load, on the real server started as its own
 * process (`servicectl foreground`, config.example.yml's modules, one process, SQLite in --data-dir, plain c2s on
 * --c2s-port, the HTTP API on --http-port, memory probe preloaded as in bench/c2s). Two figures:
 *
 *   1. Memory per PEP node: every contact publishes --nodes-per-account nodes of its own (one item each), so
 *      contacts × nodes-per-account nodes (10 000 by default); RSS and V8 heap after a full GC, before and after,
 *      RSS read once settled; per node = growth / nodes the database holds.
 *   2. Notification fan-out: one publisher with --contacts contacts (500; roster items with subscription both on
 *      both sides, through the admin API's add_rosteritem), each logged in as a raw socket client whose entity
 *      capabilities (XEP-0115, answered to the server's disco#info query) ask for `urn:bench:pep+notify`. The
 *      publisher publishes at increasing rates (--rates, publishes/s, each step --step s); each item carries its send
 *      time, every contact receives each one; latency = publish sent → notification fully read. A step passes with
 *      p99 < --p99-limit ms, ≤ 0.1 % lost and ≥ 97 % of the offered publishes sent. Reported: notifications/s
 *      delivered at the best passing step (the issue's figure), and each step's figures.
 *
 *   npm run bench:pep -- [--contacts 500] [--nodes-per-account 20] [--rates 1,2,4,…] [--step 10] [--keep]
 *
 * The load generator (the 501 clients) runs in this process, on the same 2-core machine: its event-loop delay
 * is reported per step, with the server's and the machine's CPU, and `vmstat 1 5` before the ramp. Results:
 * a markdown table printed and written to bench/results/pep-<time>.md (with pep-<time>.json).
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { ADMIN_JID, HOST, RESULTS_DIR, basicAuth, callApi, cpuBetween, cpuSnapshot, machineInfo, percentile, requireBuild, round1, round2, seedAccounts, seedUsername, sleep, waitQuiet, writeConfig } from '../api/lib.js';
import { c2sConfig, startC2sServer, vmRssMiB, type C2sServer, type ServerMemory } from '../c2s/lib.js';

const { values: opts } = parseArgs({
  options: {
    contacts: { type: 'string', default: '500' },
    'nodes-per-account': { type: 'string', default: '20' },
    /** Publishes per second of each step; × contacts = notifications/s offered. */
    rates: { type: 'string', default: '2,5,10,20,40,60,80,120,160' },
    step: { type: 'string', default: '10' },
    'p99-limit': { type: 'string', default: '200' },
    'c2s-port': { type: 'string', default: '47222' },
    'http-port': { type: 'string', default: '47280' },
    'data-dir': { type: 'string', default: '/tmp/bench-pep' },
    keep: { type: 'boolean', default: false },
  },
});

const CONTACTS = Number(opts.contacts);
const NODES_PER_ACCOUNT = Number(opts['nodes-per-account']);
const RATES = opts.rates!.split(',').map(Number);
const STEP_S = Number(opts.step);
const P99_LIMIT = Number(opts['p99-limit']);
const C2S_PORT = Number(opts['c2s-port']);
const HTTP_PORT = Number(opts['http-port']);
const DATA_DIR = opts['data-dir']!;
const PASSWORD = 'bench-pep-pw';
const ADMIN_PASSWORD = 'bench-pep-admin';
const NODE = 'urn:bench:pep';
const CAPS_NODE = 'https://example.org/bench-pep';
const NS_CAPS = 'http://jabber.org/protocol/caps';
const NS_DISCO_INFO = 'http://jabber.org/protocol/disco#info';
const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
const NS_SASL = 'urn:ietf:params:xml:ns:xmpp-sasl';
const log = (text: string) => console.error(`[pep] ${new Date().toISOString().slice(11, 19)} ${text}`);
const now = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------------------
// The client: a raw socket, SCRAM-SHA-256, string searches; answers disco#info, counts notifications.

/** XEP-0115 §5.1 for one identity and these features (sha-1, base64). */
function capsVer(features: string[]): string {
  const s = 'client/pc//bench-pep<' + [...features].sort().map((f) => `${f}<`).join('');
  return createHash('sha1').update(s).digest('base64');
}
const FEATURES = [NS_DISCO_INFO, NS_CAPS, `${NODE}+notify`];
const VER = capsVer(FEATURES);

const keyCache = new Map<string, { clientKey: Buffer; storedKey: Buffer; serverKey: Buffer }>();
function scramKeys(password: string, salt: string, iterations: number) {
  const key = `${iterations}:${salt}`;
  let keys = keyCache.get(key);
  if (!keys) {
    const salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), iterations, 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    keys = { clientKey, storedKey: createHash('sha256').update(clientKey).digest(), serverKey: createHmac('sha256', salted).update('Server Key').digest() };
    keyCache.set(key, keys);
  }
  return keys;
}

const attr = (tag: string, name: string) => new RegExp(`\\s${name}=(?:'([^']*)'|"([^"]*)")`).exec(tag)?.slice(1, 3).find((v) => v !== undefined);

class PepClient {
  socket!: Socket;
  buffer = '';
  jid = '';
  capsQueries = 0;
  private waiter: { marker: RegExp; resolve: (s: string) => void; reject: (e: Error) => void } | undefined;
  private pending = new Map<string, (stanza: string) => void>();
  private nextId = 0;
  /** Called with each notification's entry text and the time it was fully read. */
  onNotification: ((entry: string, at: number) => void) | undefined;

  constructor(readonly user: string) {}

  async login(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.socket = connect({ port: C2S_PORT, host: '127.0.0.1' }, () => resolve());
      this.socket.setNoDelay(true);
      this.socket.once('error', reject);
      this.socket.setEncoding('utf8');
      this.socket.on('data', (chunk: string) => {
        this.buffer += chunk;
        if (this.waiter) this.check();
        else this.drain();
      });
      this.socket.on('close', () => this.waiter?.reject(new Error(`${this.user}: connection closed: ${this.buffer.slice(-300)}`)));
    });
    const header = `<?xml version='1.0'?><stream:stream to='${HOST}' version='1.0' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`;
    this.socket.write(header);
    await this.expect(/<\/stream:features>/);
    const nonce = randomBytes(18).toString('base64');
    const first = `n=${this.user},r=${nonce}`;
    this.socket.write(`<auth xmlns='${NS_SASL}' mechanism='SCRAM-SHA-256'>${Buffer.from(`n,,${first}`).toString('base64')}</auth>`);
    const challenge = await this.expect(/<\/challenge>|<\/failure>/);
    if (!challenge.includes('<challenge')) throw new Error(`${this.user}: SASL failed: ${challenge}`);
    const serverFirst = Buffer.from(/<challenge[^>]*>([^<]*)</.exec(challenge)![1]!, 'base64').toString();
    const a = new Map(serverFirst.split(',').map((p) => [p[0]!, p.slice(2)]));
    const keys = scramKeys(PASSWORD, a.get('s')!, Number(a.get('i')));
    const withoutProof = `c=biws,r=${a.get('r')}`;
    const authMessage = `${first},${serverFirst},${withoutProof}`;
    const signature = createHmac('sha256', keys.storedKey).update(authMessage).digest();
    const proof = Buffer.alloc(32);
    for (let i = 0; i < 32; i++) proof[i] = keys.clientKey[i]! ^ signature[i]!;
    this.socket.write(`<response xmlns='${NS_SASL}'>${Buffer.from(`${withoutProof},p=${proof.toString('base64')}`).toString('base64')}</response>`);
    const outcome = await this.expect(/<\/success>|<success[^>]*\/>|<\/failure>/);
    if (!outcome.includes('<success')) throw new Error(`${this.user}: SASL failed: ${outcome}`);
    const verifier = Buffer.from(/<success[^>]*>([^<]*)</.exec(outcome)?.[1] ?? '', 'base64').toString();
    if (!verifier.startsWith('v=') || !timingSafeEqual(Buffer.from(verifier.slice(2), 'base64'), createHmac('sha256', keys.serverKey).update(authMessage).digest())) throw new Error('SCRAM: wrong server signature');
    this.socket.write(header);
    await this.expect(/<\/stream:features>/);
    this.socket.write(`<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>bench</resource></bind></iq>`);
    const bound = await this.expect(/<\/iq>/);
    this.jid = /<jid>([^<]*)<\/jid>/.exec(bound)?.[1] ?? '';
    if (!this.jid) throw new Error(`${this.user}: bind failed: ${bound}`);
    this.drain();
  }

  /** Available presence with entity capabilities asking for NODE+notify (or none). */
  presence(withCaps: boolean): void {
    this.socket.write(withCaps ? `<presence><c xmlns='${NS_CAPS}' hash='sha-1' node='${CAPS_NODE}' ver='${VER}'/></presence>` : '<presence/>');
  }

  /** Sends an IQ; resolves with the whole answer. */
  iq(type: 'get' | 'set', payload: string): Promise<string> {
    const id = `q${++this.nextId}`;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket.write(`<iq type='${type}' id='${id}'>${payload}</iq>`);
    });
  }

  /** Publishes to the own PEP node without waiting; `done` gets whether it succeeded. */
  publish(node: string, itemId: string, payload: string, done?: (ok: boolean, answer: string) => void): void {
    const id = `p${++this.nextId}`;
    if (done) this.pending.set(id, (answer) => done(attr(answer.slice(0, answer.indexOf('>') + 1), 'type') === 'result', answer));
    this.socket.write(`<iq type='set' id='${id}'><pubsub xmlns='${NS_PUBSUB}'><publish node='${node}'><item id='${itemId}'>${payload}</item></publish></pubsub></iq>`);
  }

  close(): void {
    this.socket?.end('</stream:stream>');
    setTimeout(() => this.socket?.destroy(), 2000).unref();
  }

  private expect(marker: RegExp): Promise<string> {
    return new Promise((resolve, reject) => {
      this.waiter = { marker, resolve, reject };
      this.check();
    });
  }

  private check(): void {
    const m = this.waiter!.marker.exec(this.buffer);
    if (!m) return;
    const text = this.buffer.slice(0, m.index + m[0].length);
    this.buffer = this.buffer.slice(m.index + m[0].length);
    const w = this.waiter!;
    this.waiter = undefined;
    w.resolve(text);
  }

  /** Handles every complete top-level stanza in the buffer. */
  private drain(): void {
    let start = 0;
    for (;;) {
      const open = this.buffer.indexOf('<', start);
      if (open === -1) break;
      const headEnd = this.buffer.indexOf('>', open);
      if (headEnd === -1) break;
      const name = /^<([a-z:]+)/.exec(this.buffer.slice(open, open + 20))?.[1];
      if (!name) {
        start = headEnd + 1;
        continue;
      }
      let end: number;
      if (this.buffer[headEnd - 1] === '/') end = headEnd + 1;
      else {
        const close = this.buffer.indexOf(`</${name}>`, headEnd);
        if (close === -1) break;
        end = close + name.length + 3;
      }
      const at = now();
      this.stanza(name, this.buffer.slice(open, end), this.buffer.slice(open, headEnd + 1), at);
      start = end;
    }
    if (start > 0) this.buffer = this.buffer.slice(start);
  }

  private stanza(name: string, text: string, head: string, at: number): void {
    if (name === 'message') {
      const e = text.indexOf(`<entry xmlns='${NODE}'>`) !== -1 ? text.indexOf(`<entry xmlns='${NODE}'>`) : text.indexOf(`<entry xmlns="${NODE}">`);
      if (e !== -1) {
        const from = text.indexOf('>', e) + 1;
        this.onNotification?.(text.slice(from, text.indexOf('</entry>', from)), at);
      }
    } else if (name === 'iq') {
      const type = attr(head, 'type');
      const id = attr(head, 'id') ?? '';
      if (type === 'get' && text.includes(NS_DISCO_INFO)) {
        this.capsQueries++;
        const node = /<query[^>]*\snode=(?:'([^']*)'|"([^"]*)")/.exec(text);
        const from = attr(head, 'from');
        this.socket.write(
          `<iq type='result' id='${id}'${from ? ` to='${from}'` : ''}><query xmlns='${NS_DISCO_INFO}'${node ? ` node='${node[1] ?? node[2]}'` : ''}>` +
            `<identity category='client' type='pc' name='bench-pep'/>${FEATURES.map((f) => `<feature var='${f}'/>`).join('')}</query></iq>`,
        );
      } else if (type === 'result' || type === 'error') {
        const resolve = this.pending.get(id);
        this.pending.delete(id);
        resolve?.(text);
      } else if (type === 'get' || type === 'set') {
        this.socket.write(`<iq type='error' id='${id}'${attr(head, 'from') ? ` to='${attr(head, 'from')}'` : ''}><error type='cancel'><service-unavailable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></iq>`);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------

async function pool<T>(items: T[], concurrency: number, run: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const i = next++;
        await run(items[i]!, i);
      }
    }),
  );
}

/** Waits until the server's RSS stays within 1 MiB for `seconds` (at most `maxS`); returns the settled RSS. */
async function settledRss(pid: number, seconds = 10, maxS = 60): Promise<number> {
  const deadline = Date.now() + maxS * 1000;
  let window: number[] = [];
  for (;;) {
    window.push(vmRssMiB(pid));
    if (window.length > seconds) window = window.slice(-seconds - 1);
    if (window.length > seconds && Math.max(...window) - Math.min(...window) <= 1) return window.at(-1)!;
    if (Date.now() > deadline) return window.at(-1)!;
    await sleep(1000);
  }
}

interface StepResult {
  publishesPerS: number;
  offeredNotificationsPerS: number;
  published: number;
  publishErrors: number;
  expected: number;
  delivered: number;
  lostPct: number;
  deliveredPerS: number;
  p50: number;
  p99: number;
  max: number;
  serverCpuPct: number;
  serverMainThreadPct: number;
  benchCpuPct: number;
  otherCpuPct: number;
  generatorLoopP99Ms: number;
  pass: boolean;
  why: string;
}

async function main(): Promise<void> {
  requireBuild();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const notes: string[] = [];
  rmSync(DATA_DIR, { recursive: true, force: true });
  mkdirSync(DATA_DIR, { recursive: true });
  const config = c2sConfig({ httpPort: HTTP_PORT, c2sPort: C2S_PORT, dataDir: DATA_DIR, loglevel: 'warning', mode: 'plain', modules: 'example' });
  const modules = config.modules as Record<string, unknown>;
  for (const needed of ['mod_pubsub', 'mod_roster', 'mod_presence', 'mod_admin_extra']) {
    if (!modules[needed]) {
      modules[needed] = {};
      notes.push(`config.example.yml lacks ${needed}: added with its defaults`);
    }
  }
  const configFile = join(DATA_DIR, 'config.yml');
  await writeConfig(configFile, config);
  log(`starting the server (c2s ${C2S_PORT}, http ${HTTP_PORT}, data ${DATA_DIR})`);
  const serverStarted = performance.now();
  const server: C2sServer = await startC2sServer({ configFile, httpPort: HTTP_PORT, logFile: join(DATA_DIR, 'server.log') });
  const clients: PepClient[] = [];
  try {
    const seeded = await seedAccounts(join(DATA_DIR, 'service.db'), { count: CONTACTS + 1, adminPassword: ADMIN_PASSWORD, userPassword: PASSWORD });
    log(`seeded ${seeded.inserted} accounts in ${Math.round(seeded.ms)} ms`);
    const auth = basicAuth(ADMIN_JID, ADMIN_PASSWORD);
    const publisherUser = seedUsername(0);
    const contactUsers = Array.from({ length: CONTACTS }, (_, i) => seedUsername(i + 1));

    // Rosters: subscription both on both sides, through the admin API.
    const rosterStarted = performance.now();
    await pool(contactUsers, 8, async (user) => {
      for (const [a, b] of [
        [publisherUser, user],
        [user, publisherUser],
      ] as const) {
        const res = await callApi(HTTP_PORT, 'add_rosteritem', { localuser: a, localhost: HOST, user: b, host: HOST, nick: b, groups: ['bench'], subs: 'both' }, auth);
        if (res.status !== 200) throw new Error(`add_rosteritem ${a} → ${b}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    });
    log(`rosters: ${CONTACTS * 2} add_rosteritem in ${Math.round(performance.now() - rosterStarted)} ms`);

    // Logins.
    const loginStarted = performance.now();
    const publisher = new PepClient(publisherUser);
    await publisher.login();
    clients.push(publisher);
    const contacts = contactUsers.map((u) => new PepClient(u));
    await pool(contacts, 20, async (c) => {
      await c.login();
      clients.push(c);
    });
    log(`${contacts.length + 1} sessions logged in in ${Math.round(performance.now() - loginStarted)} ms`);
    // Caps: the first presence makes the server ask; the others then find the verified hash.
    contacts[0]!.presence(true);
    await sleep(1000);
    for (const c of contacts.slice(1)) c.presence(true);
    await sleep(3000);
    const queries = contacts.reduce((n, c) => n + c.capsQueries, 0);
    log(`caps queries answered: ${queries}`);

    // Readiness: a warm-up item must reach every contact (their caps known to the server).
    let seq = 0;
    const ready = async (): Promise<number> => {
      const tag = `warm${seq++}`;
      let got = 0;
      for (const c of contacts) c.onNotification = (entry) => (entry.startsWith(tag) ? got++ : 0);
      publisher.publish(NODE, tag, `<entry xmlns='${NODE}'>${tag}:${now()}</entry>`);
      const end = Date.now() + 10_000;
      while (got < contacts.length && Date.now() < end) await sleep(100);
      return got;
    };
    let reached = 0;
    for (let attempt = 0; attempt < 5 && reached < contacts.length; attempt++) {
      reached = await ready();
      log(`warm-up item reached ${reached}/${contacts.length} contacts`);
    }
    if (reached < contacts.length) notes.push(`only ${reached}/${contacts.length} contacts got the warm-up notification: their capabilities were not taken`);

    // 1. Memory per PEP node. A fresh Node process gives back its start-up memory in steps for up to a
    // minute or so (bench/muc): the baseline is read once the process is 90 s old and its RSS has settled.
    while (performance.now() - serverStarted < 90_000) await sleep(1000);
    const before: ServerMemory = await server.memory();
    const rssBefore = await settledRss(server.pid, 15, 120);
    const nodesStarted = performance.now();
    let nodeErrors = 0;
    let firstError = '';
    await pool(contacts, 25, async (c) => {
      await new Promise<void>((resolve) => {
        let left = NODES_PER_ACCOUNT;
        for (let k = 0; k < NODES_PER_ACCOUNT; k++)
          c.publish(`urn:bench:mem:${k}`, 'current', `<value xmlns='urn:bench:mem'>${k}</value>`, (ok, answer) => {
            if (!ok) {
              nodeErrors++;
              firstError ||= answer;
            }
            if (--left === 0) resolve();
          });
      });
    });
    const nodeMs = performance.now() - nodesStarted;
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(DATA_DIR, 'service.db'), { readonly: true });
    const nodesStored = (db.prepare("select count(*) as n from pubsub_nodes where node like 'urn:bench:mem:%'").get() as { n: number }).n;
    db.close();
    log(`created ${nodesStored} nodes (${nodeErrors} errors${firstError ? `: ${firstError.slice(0, 300)}` : ''}) in ${Math.round(nodeMs)} ms`);
    await sleep(3000);
    const after: ServerMemory = await server.memory();
    const rssAfter = await settledRss(server.pid, 15, 120);
    const memory = {
      nodes: nodesStored,
      nodeErrors,
      createMs: Math.round(nodeMs),
      nodesPerS: round1(nodesStored / (nodeMs / 1000)),
      rssBeforeMiB: round1(rssBefore),
      rssAfterMiB: round1(rssAfter),
      heapBeforeMiB: round2(before.heapUsedMiB),
      heapAfterMiB: round2(after.heapUsedMiB),
      rssPerNodeKiB: round2(((rssAfter - rssBefore) * 1024) / Math.max(1, nodesStored)),
      heapPerNodeBytes: Math.round(((after.heapUsedMiB - before.heapUsedMiB) * 1024 * 1024) / Math.max(1, nodesStored)),
    };
    log(`memory per node: RSS ${memory.rssPerNodeKiB} KiB, heap ${memory.heapPerNodeBytes} B`);

    // 2. Fan-out ramp.
    const vmstat = execFileSync('vmstat', ['1', '5'], { encoding: 'utf8' });
    log(`vmstat 1 5:\n${vmstat}`);
    const quiet = await waitQuiet(25, 60, (pct) => log(`waiting for a quiet machine (other work: ${pct} % of a core)`));
    const steps: StepResult[] = [];
    const loop = monitorEventLoopDelay({ resolution: 5 });
    const runStep = async (rate: number): Promise<StepResult> => {
      const stepId = `s${seq++}`;
      const latencies: number[] = [];
      for (const c of contacts)
        c.onNotification = (entry, at) => {
          if (!entry.startsWith(stepId + ':')) return;
          latencies.push(at - Number(entry.slice(stepId.length + 1)));
        };
      let published = 0;
      let errors = 0;
      const total = Math.round(rate * STEP_S);
      loop.reset();
      loop.enable();
      const cpuA = cpuSnapshot(server.pid);
      const started = performance.now();
      while (published < total) {
        const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate) + 1);
        while (published < due) {
          publisher.publish(NODE, `${stepId}-${published}`, `<entry xmlns='${NODE}'>${stepId}:${now()}</entry>`, (ok) => (ok ? 0 : errors++));
          published++;
        }
        if (performance.now() - started > STEP_S * 1000 * 1.5) break;
        await sleep(5);
      }
      const sendS = (performance.now() - started) / 1000;
      const expected = published * contacts.length;
      const waitEnd = Date.now() + 5000;
      while (latencies.length < expected && Date.now() < waitEnd) await sleep(50);
      const cpuB = cpuSnapshot(server.pid);
      loop.disable();
      const cpu = cpuBetween(cpuA, cpuB);
      const sorted = Float64Array.from(latencies).sort();
      const lostPct = expected ? round2(((expected - latencies.length) / expected) * 100) : 0;
      const p99 = round1(percentile(sorted, 99));
      const keptUp = published >= 0.97 * total && sendS <= STEP_S * 1.1;
      const why = [p99 >= P99_LIMIT ? `p99 ${p99} ms ≥ ${P99_LIMIT}` : '', lostPct > 0.1 ? `${lostPct} % lost` : '', !keptUp ? 'publisher fell behind' : '', errors ? `${errors} publish errors` : ''].filter(Boolean).join(', ');
      return {
        publishesPerS: rate,
        offeredNotificationsPerS: rate * contacts.length,
        published,
        publishErrors: errors,
        expected,
        delivered: latencies.length,
        lostPct,
        deliveredPerS: Math.round(latencies.length / Math.max(sendS, STEP_S)),
        p50: round1(percentile(sorted, 50)),
        p99,
        max: round1(sorted.length ? sorted[sorted.length - 1]! : NaN),
        serverCpuPct: cpu.serverProcessPct,
        serverMainThreadPct: cpu.serverMainThreadPct,
        benchCpuPct: cpu.benchProcessPct,
        otherCpuPct: round1(Math.max(0, cpu.machinePct - cpu.serverProcessPct - cpu.benchProcessPct)),
        generatorLoopP99Ms: round1(loop.percentile(99) / 1e6),
        pass: !why,
        why,
      };
    };
    let lastGood: number | undefined;
    let firstBad: number | undefined;
    for (const rate of RATES) {
      log(`step: ${rate} publishes/s → ${rate * contacts.length} notifications/s offered`);
      const result = await runStep(rate);
      steps.push(result);
      log(`  delivered ${result.deliveredPerS}/s, p50 ${result.p50} ms, p99 ${result.p99} ms, lost ${result.lostPct} %, server CPU ${result.serverCpuPct} % (main ${result.serverMainThreadPct} %), bench ${result.benchCpuPct} %, other ${result.otherCpuPct} % ${result.pass ? 'PASS' : `FAIL (${result.why})`}`);
      await sleep(3000);
      if (result.pass) lastGood = rate;
      else {
        firstBad = rate;
        break;
      }
    }
    if (lastGood !== undefined && firstBad !== undefined && firstBad - lastGood > 1) {
      const mid = Math.round((lastGood + firstBad) / 2);
      log(`step (halfway): ${mid} publishes/s`);
      const result = await runStep(mid);
      steps.push(result);
      log(`  delivered ${result.deliveredPerS}/s, p99 ${result.p99} ms, lost ${result.lostPct} % ${result.pass ? 'PASS' : `FAIL (${result.why})`}`);
    }
    if (firstBad === undefined) notes.push(`every rate passed: the ramp never saturated the server (raise --rates)`);
    const disturbed = steps.filter((s) => s.otherCpuPct > 25);
    if (quiet >= 25 || disturbed.length)
      notes.push(
        `disturbed: other work used ${quiet} % of a core before the ramp` +
          (disturbed.length ? ` and more than 25 % during ${disturbed.length} of ${steps.length} steps (up to ${Math.max(...disturbed.map((s) => s.otherCpuPct))} %)` : '') +
          ': these figures are not worth quoting; run again on a quiet machine',
      );
    const best = steps.filter((s) => s.pass).sort((a, b) => b.deliveredPerS - a.deliveredPerS)[0];

    // The report.
    const machine = machineInfo();
    const md = [
      `# bench/pep — ${new Date().toISOString()}`,
      '',
      `Machine: ${machine.cpuModel}, ${machine.cores} cores, ${machine.ramGiB} GiB, ${machine.os}, Node ${machine.node}. Server: one process, config.example.yml's modules, SQLite, plain c2s, log level warning. Load generator: this process (${contacts.length + 1} raw socket clients).`,
      '',
      `## Notification fan-out to ${contacts.length} contacts (p99 limit ${P99_LIMIT} ms, ${STEP_S} s per step)`,
      '',
      `**${best ? `${best.deliveredPerS} notifications/s` : 'no step passed'}** delivered at p99 < ${P99_LIMIT} ms${best ? ` (${best.publishesPerS} publishes/s, p99 ${best.p99} ms)` : ''}.`,
      '',
      '| publishes/s | notifications/s offered | delivered/s | p50 ms | p99 ms | max ms | lost % | server CPU % (main thread) | generator CPU % | other CPU % | generator loop p99 ms | result |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...steps.map((s) => `| ${s.publishesPerS} | ${s.offeredNotificationsPerS} | ${s.deliveredPerS} | ${s.p50} | ${s.p99} | ${s.max} | ${s.lostPct} | ${s.serverCpuPct} (${s.serverMainThreadPct}) | ${s.benchCpuPct} | ${s.otherCpuPct} | ${s.generatorLoopP99Ms} | ${s.pass ? 'pass' : `fail: ${s.why}`} |`),
      '',
      `## Memory per PEP node (${memory.nodes} nodes: ${NODES_PER_ACCOUNT} per account over ${contacts.length} accounts, one item each)`,
      '',
      '| | before | after | per node |',
      '|---|---:|---:|---:|',
      `| RSS (settled) | ${memory.rssBeforeMiB} MiB | ${memory.rssAfterMiB} MiB | ${memory.rssPerNodeKiB} KiB |`,
      `| V8 heap used after full GC | ${memory.heapBeforeMiB} MiB | ${memory.heapAfterMiB} MiB | ${memory.heapPerNodeBytes} B |`,
      '',
      `Created in ${memory.createMs} ms (${memory.nodesPerS} nodes/s, 25 accounts publishing at once), ${memory.nodeErrors} errors. Nodes and items live in SQLite; the growth is the server's in-process state (caches) plus what SQLite's page cache keeps in RSS.`,
      '',
      '## Machine load',
      '',
      `Other work before the ramp: ${quiet} % of a core (waited up to 60 s for < 25 %). \`vmstat 1 5\` just before the ramp:`,
      '',
      '```',
      vmstat.trimEnd(),
      '```',
      '',
      ...(notes.length ? ['## Notes', '', ...notes.map((n) => `- ${n}`), ''] : []),
    ].join('\n');
    mkdirSync(RESULTS_DIR, { recursive: true });
    const file = join(RESULTS_DIR, `pep-${stamp}.md`);
    writeFileSync(file, md + '\n');
    writeFileSync(join(RESULTS_DIR, `pep-${stamp}.json`), JSON.stringify({ machine, options: opts, memory, steps, vmstat, quiet, notes, capsQueries: queries }, null, 2));
    console.log(md);
    log(`written to ${file}`);
  } finally {
    for (const c of clients) c.close();
    await sleep(500);
    const code = await server.stop();
    if (code !== 0) log(`the server exited with ${code}`);
    if (!opts.keep) rmSync(DATA_DIR, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
