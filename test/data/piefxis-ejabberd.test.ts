/**
 * Migration from a real ejabberd 23.01 (Debian's package) through XEP-0227 (issue 19). The reference kit's
 * scripts (test/fixtures/ejabberd-ref, a copy of ../shared/bench-kit/ejabberd) run an isolated ejabberd on
 * its own ports and directory; it is filled with
 * its own ejabberdctl (accounts, rosters with groups, vCards, private XML, offline messages), exported with
 * its export_piefxis, and the index file it writes is imported here with import_piefxis. The accounts then
 * log in here with their old passwords and find their rosters, vCards and offline messages. Twice: with the
 * kit's password storage (plain, ejabberd's default) and with `auth_password_format: scram`, whose export
 * carries SCRAM-SHA-1 keys only (base64-encoded twice by ejabberd 23.01).
 *
 * Needs ejabberd installed (apt-get install ejabberd erlang-p1-oauth2; .ci/install-test-clients does it) and
 * root or passwordless sudo (Debian's ejabberdctl runs the VM as the ejabberd user): without them the test
 * fails, saying so.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, copyFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servicectl } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';

const KIT = new URL('../fixtures/ejabberd-ref/', import.meta.url).pathname;
const KIT_FILES = ['env.sh', 'start.sh', 'stop.sh', 'ctl.sh', 'ejabberd.yml.tmpl'];
const EJABBERDCTL = '/usr/sbin/ejabberdctl';
/** Ports and node apart from the kit's defaults, so that a benchmark's reference instance is not disturbed. */
const ENV = {
  REF_C2S_PORT: '26222',
  REF_HTTP_PORT: '26280',
  REF_XMLRPC_PORT: '26281',
  REF_DIST_PORT: '26290',
  REF_NODE: 'piefxis@localhost',
};
const NS_ROSTER = 'jabber:iq:roster';
const NS_VCARD = 'vcard-temp';
const NS_PRIVATE = 'jabber:iq:private';

function run(file: string, args: string[], env: Record<string, string> = {}, timeout = 180_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

/** Not root: the kit's scripts (and chown, rm of the VM's files) run through passwordless sudo, env passed along. */
const AS_ROOT = process.getuid?.() === 0;

function privileged(file: string, args: string[], env: Record<string, string> = {}, timeout?: number): Promise<{ code: number; out: string }> {
  if (AS_ROOT) return run(file, args, env, timeout);
  return run('sudo', ['-n', 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), file, ...args], {}, timeout);
}

/** Fails (never skips) when ejabberd 23.01 cannot run here, naming what to install. */
async function requireEjabberd(): Promise<void> {
  if (!existsSync(join(KIT, 'start.sh'))) throw new Error(`the reference kit is missing: ${KIT} (start.sh, env.sh, ctl.sh, stop.sh, ejabberd.yml.tmpl)`);
  if (!existsSync(EJABBERDCTL)) {
    throw new Error(
      `ejabberd is not installed (${EJABBERDCTL} missing): install the Debian package 'ejabberd' (23.01 on bookworm) with 'apt-get install ejabberd erlang-p1-oauth2', ` +
        'or run .ci/install-test-clients',
    );
  }
  const version = await run('dpkg-query', ['-W', '-f=${Version}', 'ejabberd']);
  if (!version.out.startsWith('23.01')) throw new Error(`the Debian package 'ejabberd' is ${version.out || 'not installed'}, this test needs 23.01 (Debian bookworm)`);
  if (!AS_ROOT && (await run('sudo', ['-n', 'true'])).code !== 0) {
    throw new Error("Debian's ejabberdctl must be run as root (it starts the VM as the ejabberd user): run this test as root or give it passwordless sudo");
  }
}

/** One isolated ejabberd: a copy of the kit (its template given `extraConfig`), its state directory and ports. */
class Ejabberd {
  constructor(
    readonly kit: string,
    readonly env: Record<string, string>,
  ) {}

  static async create(extraConfig: string): Promise<Ejabberd> {
    const kit = await mkdtemp(join(tmpdir(), 'piefxis-kit-'));
    // The VM runs as the ejabberd user, which must reach the state directory inside.
    await chmod(kit, 0o755);
    for (const file of KIT_FILES) await copyFile(join(KIT, file), join(kit, file));
    for (const file of ['env.sh', 'start.sh', 'stop.sh', 'ctl.sh']) await chmod(join(kit, file), 0o755);
    if (extraConfig) await appendFile(join(kit, 'ejabberd.yml.tmpl'), `\n${extraConfig}\n`);
    return new Ejabberd(kit, { ...ENV, REF_DIR: join(kit, 'state') });
  }

  async start(): Promise<void> {
    const started = await privileged(join(this.kit, 'start.sh'), [], this.env);
    if (started.code !== 0) throw new Error(`ejabberd did not start: ${started.out}`);
  }

  async ctl(...args: string[]): Promise<string> {
    const result = await privileged(join(this.kit, 'ctl.sh'), args, this.env, 60_000);
    if (result.code !== 0) throw new Error(`ejabberdctl ${args.join(' ')}: exit ${result.code}: ${result.out}`);
    return result.out;
  }

  async stop(): Promise<void> {
    await privileged(join(this.kit, 'stop.sh'), [], this.env);
    // The state directory belongs to the ejabberd user.
    await privileged('rm', ['-rf', this.kit]);
  }
}

async function rosterOf(client: Client): Promise<Element[]> {
  const answer = await client.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_ROSTER })));
  return answer.getChild('query', NS_ROSTER)!.getChildren('item');
}

/** The messages the client gets after its initial presence, `count` of them. */
async function offlineMessages(client: Client, count: number): Promise<Element[]> {
  const got: Element[] = [];
  const all = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${got.length} of ${count} offline messages arrived`)), 10_000);
    client.on('stanza', (s: Element) => {
      if (s.is('message') && s.getChild('body')) got.push(s);
      if (got.length === count) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await client.send(xml('presence'));
  await all;
  return got;
}

for (const scenario of [
  { name: 'plain passwords (the kit\'s configuration)', extra: '', format: 'plain' },
  { name: 'auth_password_format: scram', extra: 'auth_password_format: scram', format: 'scram' },
] as const) {
  describe(`XEP-0227 migration from ejabberd 23.01, ${scenario.name}`, function () {
    this.timeout(300_000);
    let ejabberd: Ejabberd | undefined;
    let t: TestServer | undefined;
    let exportDir: string;
    let clients: Client[] = [];
    let index: string;
    let exportedAt = 0;

    before(async () => {
      await requireEjabberd();
      ejabberd = await Ejabberd.create(scenario.extra);
      await ejabberd.start();
      for (const [user, password] of [
        ['alice', 'alice-old-pw'],
        ['bob', 'bob-old-pw'],
        ['carol', 'carol pw ü'],
      ]) {
        await ejabberd.ctl('register', user!, 'localhost', password!);
      }
      await ejabberd.ctl('register', 'erin', 'example.test', 'erin-old-pw');
      await ejabberd.ctl('add_rosteritem', 'alice', 'localhost', 'bob', 'localhost', 'Bobby', 'Friends;Work', 'both');
      await ejabberd.ctl('add_rosteritem', 'alice', 'localhost', 'erin', 'example.test', 'Erin', 'Remote', 'to');
      await ejabberd.ctl('add_rosteritem', 'bob', 'localhost', 'alice', 'localhost', 'Alice', 'Friends', 'both');
      await ejabberd.ctl('set_vcard', 'alice', 'localhost', 'FN', 'Alice Liddell');
      await ejabberd.ctl('set_vcard', 'alice', 'localhost', 'NICKNAME', 'ally');
      await ejabberd.ctl('set_vcard2', 'alice', 'localhost', 'N', 'GIVEN', 'Alice');
      await ejabberd.ctl('set_vcard2', 'alice', 'localhost', 'ORG', 'ORGNAME', 'Wonderland & Co');
      await ejabberd.ctl('private_set', 'alice', 'localhost', "<storage xmlns='storage:rosternotes'><note jid='bob@localhost'>old friend</note></storage>");
      // alice is offline: ejabberd stores these.
      await ejabberd.ctl('send_message', 'chat', 'bob@localhost', 'alice@localhost', '', 'first <offline> message');
      await ejabberd.ctl('send_message', 'normal', 'erin@example.test', 'alice@localhost', 'Subject two', 'second offline message');
      exportDir = await mkdtemp(join(tmpdir(), 'piefxis-ejabberd-export-'));
      // ejabberd writes there; this process (and this server) read its files.
      await chmod(exportDir, 0o755);
      const chown = await privileged('chown', ['ejabberd', exportDir]);
      if (chown.code !== 0) throw new Error(`chown ejabberd ${exportDir}: ${chown.out}`);
      await ejabberd.ctl('export_piefxis', exportDir);
      exportedAt = Date.now();
      const files = await readdir(exportDir);
      index = files.find((f) => /^\d{8}-\d{6}\.xml$/.test(f))!;
      expect(index, `ejabberd's index file among ${files.join(', ')}`).to.be.a('string');
      // Stopped before this server starts: nothing of it is needed any more.
      await ejabberd.stop();
      ejabberd = undefined;
      t = await TestServer.start({ ...xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_vcard: {}, mod_private: {}, mod_offline: {} }), hosts: ['localhost', 'example.test'] });
    });

    after(async () => {
      await stopAll(...clients);
      clients = [];
      await ejabberd?.stop();
      await t?.stop();
      if (exportDir) await privileged('rm', ['-rf', exportDir]);
    });

    it(`ejabberd's export carries the passwords as ${scenario.format === 'plain' ? 'password attributes' : 'SCRAM-SHA-1 keys'}`, async () => {
      const host = (await readdir(exportDir)).find((f) => f.endsWith('_localhost.xml'))!;
      const text = await readFile(join(exportDir, host), 'utf8');
      if (scenario.format === 'plain') expect(text).to.contain("password='alice-old-pw'");
      else {
        expect(text).to.contain("mechanism='SCRAM-SHA-1'");
        expect(text).not.to.contain('alice-old-pw');
      }
    });

    it('import_piefxis of its index file imports every account of both hosts', async () => {
      const cli = await servicectl(t!.configFile, 'import_piefxis', join(exportDir, index));
      expect(cli.code, cli.stdout + cli.stderr).to.equal(0);
      expect(await t!.server.services.accounts.listUsers('localhost')).to.deep.equal(['admin', 'alice', 'bob', 'carol']);
      expect(await t!.server.services.accounts.listUsers('example.test')).to.deep.equal(['erin']);
      const summary = t!.logged((l) => typeof l.msg === 'string' && l.msg.startsWith('imported 5 accounts'));
      expect(summary, 'the import summary').to.have.length(1);
      expect(summary[0]!.failed).to.equal(0);
    });

    it('the accounts log in with their old passwords and see their rosters, vCards, private XML and offline messages', async () => {
      // ejabberd's SCRAM export has SHA-1 keys only; plain passwords were stored here as keys of every hash.
      const mechanism = scenario.format === 'scram' ? 'SCRAM-SHA-1' : 'SCRAM-SHA-256';
      const alice = await login(t!, { user: 'alice', password: 'alice-old-pw', mechanism });
      clients.push(alice);
      const roster = await rosterOf(alice);
      expect(roster.map((i) => [i.attrs.jid, i.attrs.subscription, i.attrs.name, i.getChildren('group').map((g) => g.text()).sort()])).to.deep.equal([
        ['bob@localhost', 'both', 'Bobby', ['Friends', 'Work']],
        ['erin@example.test', 'to', 'Erin', ['Remote']],
      ]);
      const vcard = (await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('vCard', { xmlns: NS_VCARD })))).getChild('vCard', NS_VCARD)!;
      expect(vcard.getChildText('FN')).to.equal('Alice Liddell');
      expect(vcard.getChildText('NICKNAME')).to.equal('ally');
      expect(vcard.getChild('N')!.getChildText('GIVEN')).to.equal('Alice');
      expect(vcard.getChild('ORG')!.getChildText('ORGNAME')).to.equal('Wonderland & Co');
      const notes = (await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: NS_PRIVATE }, xml('storage', { xmlns: 'storage:rosternotes' }))))).getChild('query', NS_PRIVATE)!;
      expect(notes.getChild('storage', 'storage:rosternotes')!.getChildText('note')).to.equal('old friend');
      const messages = await offlineMessages(alice, 2);
      expect(messages.map((m) => [m.attrs.from, m.attrs.type ?? 'normal', m.getChildText('body')])).to.deep.equal([
        ['bob@localhost', 'chat', 'first <offline> message'],
        ['erin@example.test', 'normal', 'second offline message'],
      ]);
      expect(messages[1]!.getChildText('subject')).to.equal('Subject two');
      // Stamped once, with the time ejabberd stored them (before this server even started).
      for (const message of messages) {
        const delays = message.getChildren('delay', 'urn:xmpp:delay').filter((d) => d.attrs.from === 'localhost');
        expect(delays, 'one delay from the server').to.have.length(1);
        expect(Date.parse(delays[0]!.attrs.stamp)).to.be.below(exportedAt);
      }

      const bob = await login(t!, { user: 'bob', password: 'bob-old-pw', mechanism });
      const carol = await login(t!, { user: 'carol', password: 'carol pw ü', mechanism });
      clients.push(bob, carol);
      // The test certificate does not name example.test: erin's password is checked without a login.
      expect(await t!.server.services.accounts.checkPassword('erin', 'example.test', 'erin-old-pw')).to.equal(true);
      expect((await rosterOf(bob)).map((i) => [i.attrs.jid, i.attrs.subscription, i.attrs.name])).to.deep.equal([['alice@localhost', 'both', 'Alice']]);
      // A wrong password is still refused.
      let refused = false;
      try {
        await stopAll(await login(t!, { user: 'alice', password: 'not-the-password', mechanism }));
      } catch {
        refused = true;
      }
      expect(refused, 'a wrong password logs in').to.equal(true);
    });
  });
}
