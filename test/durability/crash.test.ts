/**
 * Nothing acknowledged is lost in a crash (issue 10). On each database, the server runs as its own process
 * (`servicectl foreground`) under a write load (load.ts: registrations over /api, roster sets from XMPP
 * clients, offline messages from clients with stream management, OAuth tokens from oauth_issue_token and
 * the password grant), is killed with SIGKILL while writes of every kind are in flight, and is started
 * again on the same data; then (verify.ts) everything acknowledged must be there and work, and nothing may
 * be half-written. Two rounds per database, the second on top of the first's data. mod_mam is on: every
 * acknowledged message must also be in its sender's and its recipient's archives (issue 16).
 *
 * What each database's settings guarantee (a process crash versus a power loss) is in docs/decisions.md.
 *
 * Alone (`--spec` would add to .mocharc.json's spec, not replace it; TEST_DATABASES narrows the databases):
 *   npx tsc -b && NODE_EXTRA_CA_CERTS=test/fixtures/tls/ca.pem npx mocha --no-config --node-option import=tsx \
 *     --node-option unhandled-rejections=strict \
 *     --reporter test/support/reporter.cjs --timeout 30000 --exit test/durability/crash.test.ts
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { freePort, respawnServer, spawnServer, type ServerProcess } from '../support/process.js';
import { servicectl } from '../support/cli.js';
import { sqlConfig, type RawConfig } from '../support/server.js';
import { TLS_FIXTURE } from '../support/xmpp.js';
import { HOST, Ledger, Load, OAUTH_CLIENT, TOKEN_SCOPE, passwordOf, type Counts, type LoadPlan } from './load.js';
import { api, openDatabase, verify, type Summary } from './verify.js';

const ROUNDS = 2;
/** Acknowledgements of each kind to wait for before the kill: the load is well under way. */
const BEFORE_KILL: Counts = { registrations: 4, roster: 8, messages: 20, tokens: 3 };

const ROSTER_OWNERS = ['rosa', 'rolf'];
const SENDERS = ['sam', 'sue'];
const RECIPIENTS = ['rita', 'rex', 'ruth'];
const TOKEN_USERS = ['tom', 'tina'];

function crashConfig(httpPort: number, c2sPort: number, sql: RawConfig): RawConfig {
  return {
    hosts: [HOST],
    loglevel: 'warning',
    certfiles: [TLS_FIXTURE],
    listen: [
      { port: httpPort, ip: '127.0.0.1', module: 'service_http', request_handlers: { '/api': 'mod_http_api', '/oauth': 'service_oauth' } },
      { port: c2sPort, ip: '127.0.0.1', module: 'service_c2s', starttls_required: true },
    ],
    acl: { admin: { user: `admin@${HOST}` }, loopback: { ip: ['127.0.0.0/8'] } },
    api_permissions: {
      // What spawnServer polls to know the server is up.
      'public commands': { who: { acl: 'loopback' }, what: ['status'] },
      'admin access': { who: { acl: 'admin' }, what: '*' },
      // What the tokens are checked with after the restart.
      'token holders': { who: { oauth: { scope: TOKEN_SCOPE } }, what: ['registered_vhosts'] },
    },
    oauth_access: 'all',
    oauth_expire: 3600,
    ...sql,
    modules: {
      mod_http_api: {},
      mod_admin_extra: {},
      mod_roster: { max_roster_size: 'infinity' },
      mod_offline: { max_user_messages: 'infinity' },
      mod_stream_mgmt: {},
      // Every message archived for both parties (default: always), with the archive's group commit.
      mod_mam: {},
    },
  };
}

/** The server's warnings and errors (loglevel: warning), to explain a failed write. */
function serverErrors(server: ServerProcess): string {
  return server
    .output()
    .split('\n')
    .filter((line) => line.trim())
    .slice(-20)
    .join('\n');
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await pause(10);
  }
}

for (const database of testDatabases()) {
  describe(`a crash under load on ${database.name}`, function () {
    this.timeout(100_000);
    let server: ServerProcess | undefined;

    after(async () => {
      await server?.cleanup();
      await database.cleanup();
    });

    it(`loses nothing acknowledged and half-writes nothing when killed mid-load (${ROUNDS} rounds)`, async () => {
      const settings = await database.settings('/tmp');
      const c2sPort = await freePort();
      server = await spawnServer((port) => crashConfig(port, c2sPort, sqlConfig(settings)));
      const ledger = new Ledger();

      // The operator's bootstrap, then the accounts the load uses and the OAuth client of the password grant.
      const bootstrap = await servicectl(server.configFile, 'register', 'admin', HOST, 'adminpass');
      expect(bootstrap.code, bootstrap.stderr + bootstrap.stdout).to.equal(0);
      for (const user of [...ROSTER_OWNERS, ...SENDERS, ...RECIPIENTS, ...TOKEN_USERS]) {
        const res = await api(server.port, 'register', { user, host: HOST, password: passwordOf(user) });
        expect(res.status, res.text).to.equal(200);
        ledger.registrations.set(user, { password: passwordOf(user), acked: true });
      }
      const client = await api(server.port, 'oauth_add_client_password', { client_id: OAUTH_CLIENT.id, client_name: 'Crash test', secret: OAUTH_CLIENT.secret });
      expect(client.status, client.text).to.equal(200);

      for (let round = 1; round <= ROUNDS; round++) {
        const plan: LoadPlan = { httpPort: server.port, c2sPort, round, rosterOwners: ROSTER_OWNERS, senders: SENDERS, recipients: RECIPIENTS, tokenUsers: TOKEN_USERS };
        const load = await Load.start(ledger, plan);
        const started = Date.now();
        await until(
          () => (Object.keys(BEFORE_KILL) as Array<keyof Counts>).every((k) => load.acks[k] >= BEFORE_KILL[k]) || ledger.failures.length > 0,
          30_000,
          () => `acknowledgements: ${JSON.stringify(load.acks)}`,
        );
        expect(ledger.failures, `the load before the kill; the server logged:\n${serverErrors(server)}`).to.deep.equal([]);
        // Somewhere in the middle of it, not right after a round of answers.
        await pause(50 + Math.floor(Math.random() * 200));
        const inFlight = load.inFlight();
        load.stop();
        server.child.kill('SIGKILL');
        expect(await server.exited).to.equal('SIGKILL');
        const loadMs = Date.now() - started;
        await load.settled();
        expect(ledger.failures, `answers other than acknowledgements before the kill; the server logged:\n${serverErrors(server)}`).to.deep.equal([]);
        // The kill landed mid-load: writes of every kind were sent and not yet acknowledged.
        for (const kind of Object.keys(inFlight) as Array<keyof Counts>) expect(inFlight[kind], `${kind} in flight at the kill`).to.be.greaterThan(0);

        const restarting = Date.now();
        server = await respawnServer(server);
        const restartMs = Date.now() - restarting;
        const checking = Date.now();
        const db = openDatabase(settings, server.dir);
        let summary: Summary;
        try {
          summary = await verify({ httpPort: server.port, c2sPort }, ledger, db, ROSTER_OWNERS, RECIPIENTS);
        } finally {
          await db.destroy();
        }
        // What was checked, and how many writes the kill caught after their commit but before their acknowledgement.
        console.log(
          `      ${database.name} round ${round}: killed after ${loadMs} ms of load with in flight ${JSON.stringify(inFlight)}; ` +
            `restarted in ${restartMs} ms, checked in ${Date.now() - checking} ms: ` +
            `${JSON.stringify(summary)} (registrations, roster items and tokens of every round so far, ` +
            `messages delivered at this restart, messages in both archives; unacked = committed but not acknowledged when the kill came)`,
        );
      }
    });
  });
}
