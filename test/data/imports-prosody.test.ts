/**
 * import_prosody with a real Prosody 0.12 data directory: Debian's prosody package makes it (prosodyctl
 * registers the accounts, so the SCRAM keys are Prosody's own; a Prosody on a free port, driven by slixmpp,
 * stores a roster, vCards, private XML, PEP items and offline messages). The import runs on a running server
 * with clients connected; afterwards the accounts log in with their old passwords and find their data. A
 * missing directory and a file that does not parse fail with the file and line and import nothing; a host this
 * server does not serve is left out and said so.
 */
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { convertProsodyDir } from '../../kernel/src/data/imports/prosody.js';
import { ADMIN } from '../support/admin-api.js';
import { freePort } from '../support/process.js';
import { TestServer } from '../support/server.js';
import { overControlSocket } from '../support/cli.js';
import { expectChatBothWays, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { clientsOnline } from './clients-online.js';


/** The payload (first child) of the answer to an IQ get. */
async function iqGet(client: Client, payload: Element, to?: string): Promise<Element> {
  const result = await client.iqCaller.request(xml('iq', to ? { type: 'get', to } : { type: 'get' }, payload));
  return result.getChildElements()[0]!;
}
const run = promisify(execFile);

const FILL = `
# Stores a roster, vCards, private XML, PEP items and offline messages in a scratch Prosody.
import asyncio, sys
from slixmpp import ClientXMPP
from slixmpp.xmlstream import ET
PORT = int(sys.argv[1])

async def session(jid, password, work):
    c = ClientXMPP(jid, password)
    for p in ('xep_0030', 'xep_0054', 'xep_0060'):
        c.register_plugin(p)
    done = asyncio.get_event_loop().create_future()
    async def start(_):
        try:
            await work(c)
        except Exception as e:
            print('ERR', jid, repr(e), flush=True)
        c.disconnect()
    c.add_event_handler('session_start', start)
    c.add_event_handler('disconnected', lambda _: done.done() or done.set_result(1))
    c.add_event_handler('failed_auth', lambda _: print('AUTH FAIL', jid, flush=True))
    c.connect(('127.0.0.1', PORT), disable_starttls=True, force_starttls=False)
    await asyncio.wait_for(done, 30)

def private_set(c, payload):
    iq = c.make_iq_set()
    q = ET.Element('{jabber:iq:private}query')
    q.append(ET.fromstring(payload))
    iq.append(q)
    return iq.send()

async def juliet(c):
    await c.get_roster()
    await c.update_roster('romeo@localhost', name='Romeo Montague', groups=['Friends', 'Verona'])
    await c.update_roster('tybalt@capulet.lit', name='Tybalt', groups=[])
    await private_set(c, "<storage xmlns='storage:bookmarks'><conference jid='balcony@conference.localhost' name='Balcony' autojoin='true'><nick>J</nick></conference></storage>")
    await c['xep_0060'].publish(c.boundjid.bare, 'http://jabber.org/protocol/nick', id='current', payload=ET.fromstring("<nick xmlns='http://jabber.org/protocol/nick'>Jules</nick>"))

async def romeo(c):
    vc = c['xep_0054'].make_vcard()
    vc['FN'] = 'Romeo Montague'
    vc['NICKNAME'] = 'Romeo & <Co>'
    await c['xep_0054'].publish_vcard(vc)
    c.send_message(mto='nurse@localhost', mbody='Is she there? <3 & "yes"', mtype='chat')
    c.send_message(mto='nurse@localhost', mbody='Second, ünïcödé', mtype='normal')
    await asyncio.sleep(1)

async def main():
    await session('juliet@localhost/balcony', 'juliet pass', juliet)
    await session('romeo@localhost/garden', 'r0meo&"pass', romeo)
asyncio.run(main())
print('filled', flush=True)
`;

async function which(program: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${program}`]);
    return true;
  } catch {
    return false;
  }
}

function waitForPort(port: number, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`Prosody did not listen on ${port}`));
        else setTimeout(attempt, 200);
      });
    };
    attempt();
  });
}

/** Builds a Prosody data directory with Prosody itself; returns its path. */
async function makeProsodyData(dir: string): Promise<string> {
  const data = join(dir, 'data');
  // Prosody (and prosodyctl, which switches to the prosody user when run as root) writes here.
  await mkdir(data);
  await mkdir(join(dir, 'certs'));
  for (const d of [dir, data, join(dir, 'certs')]) await chmod(d, 0o777);
  const port = await freePort();
  const config = join(dir, 'prosody.cfg.lua');
  await writeFile(
    config,
    `-- scratch Prosody for the import_prosody test
data_path = ${JSON.stringify(data)}
pidfile = ${JSON.stringify(join(dir, 'prosody.pid'))}
log = { info = ${JSON.stringify(join(dir, 'prosody.log'))} }
certificates = ${JSON.stringify(join(dir, 'certs'))}
run_as_root = true
c2s_ports = { ${port} }
c2s_direct_tls_ports = { }
s2s_ports = { }
interfaces = { "127.0.0.1" }
c2s_require_encryption = false
allow_unencrypted_plain_auth = true
authentication = "internal_hashed"
storage = "internal"
modules_enabled = { "roster", "saslauth", "vcard", "private", "offline", "pep", "disco" }
modules_disabled = { "s2s", "tls", "posix" }
VirtualHost "localhost"
VirtualHost "example.com"
  authentication = "internal_plain"
VirtualHost "elsewhere.example"
`,
  );
  await chmod(config, 0o644);
  const register = (user: string, host: string, password: string) => run('prosodyctl', ['--config', config, 'register', user, host, password]);
  await register('juliet', 'localhost', 'juliet pass');
  await register('romeo', 'localhost', 'r0meo&"pass');
  await register('nurse', 'localhost', 'nurse pass');
  await register('benvolio', 'example.com', 'plain pass');
  await register('stranger', 'elsewhere.example', 'whatever');
  const prosody: ChildProcess = spawn('prosody', ['--config', config, '-F'], { stdio: 'ignore' });
  try {
    await waitForPort(port);
    const script = join(dir, 'fill.py');
    await writeFile(script, FILL);
    const { stdout } = await run('/usr/bin/python3', [script, String(port)], { timeout: 60_000 });
    expect(stdout, stdout).to.contain('filled').and.not.contain('ERR').and.not.contain('AUTH FAIL');
  } finally {
    prosody.kill('SIGTERM');
    await new Promise((resolve) => (prosody.exitCode !== null ? resolve(null) : prosody.once('exit', resolve)));
  }
  return data;
}

describe('import_prosody (Prosody 0.12 data directory)', function () {
  this.timeout(120_000);
  let work: string;
  let prosodyData: string;
  let t: TestServer;
  let alice: Client | undefined;
  let bob: Client | undefined;
  const call = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const users = async (host: string) => (await call('registered_users', { host })).body as string[];

  before(async function () {
    // Fails, never skips: the migration is only proven against the real Prosody.
    if (!(await which('prosodyctl')) || !(await which('prosody'))) {
      throw new Error('prosody is not installed: apt-get install prosody (.ci/install-test-clients does it)');
    }
    work = await mkdtemp(join(tmpdir(), 'prosody-import-'));
    prosodyData = await makeProsodyData(work);
    t = await TestServer.start(xmppConfig({ mod_roster: {}, mod_presence: {}, mod_vcard: {}, mod_private: {}, mod_offline: {}, mod_pubsub: {}, mod_admin_extra: {} }));
    await t.bootstrapAdmin();
    ({ alice, bob } = await clientsOnline(t));
  });

  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("converts Prosody's files into the XEP-0227 document the import takes", async () => {
    expect((await readdir(prosodyData)).sort()).to.deep.equal(['elsewhere%2eexample', 'example%2ecom', 'localhost']);
    const { document, users: count } = await convertProsodyDir(prosodyData);
    expect(count).to.equal(5);
    const host = document.getChildren('host').find((h) => h.attrs.jid === 'localhost')!;
    const juliet = host.getChildren('user').find((u) => u.attrs.name === 'juliet')!;
    const scram = juliet.getChild('scram-credentials', 'urn:xmpp:pie:0#scram')!;
    expect(scram.attrs.mechanism).to.equal('SCRAM-SHA-1');
    expect(scram.getChildText('iter-count')).to.match(/^\d+$/);
    expect(Buffer.from(scram.getChildText('stored-key')!, 'base64')).to.have.length(20);
    const roster = juliet.getChild('query', 'jabber:iq:roster')!;
    const item = roster.getChildren('item').find((i) => i.attrs.jid === 'romeo@localhost')!;
    expect(item.attrs).to.deep.equal({ jid: 'romeo@localhost', name: 'Romeo Montague', subscription: 'none' });
    // Prosody keeps groups as a set: their order is not kept.
    expect(item.getChildren('group').map((g) => g.text()).sort()).to.deep.equal(['Friends', 'Verona']);
    const conference = juliet.getChild('query', 'jabber:iq:private')!.getChild('storage', 'storage:bookmarks')!.getChild('conference')!;
    expect(conference.attrs).to.deep.equal({ jid: 'balcony@conference.localhost', name: 'Balcony', autojoin: 'true' });
    expect(conference.getChildText('nick')).to.equal('J');
    expect(juliet.getChild('pubsub', 'http://jabber.org/protocol/pubsub')!.toString()).to.contain(
      "<items node='http://jabber.org/protocol/nick'><item id='current'><nick xmlns='http://jabber.org/protocol/nick'>Jules</nick></item></items>",
    );
    const romeo = host.getChildren('user').find((u) => u.attrs.name === 'romeo')!;
    expect(romeo.getChild('vCard', 'vcard-temp')!.toString()).to.contain('<NICKNAME>Romeo &amp; &lt;Co&gt;</NICKNAME>');
    const offline = host.getChildren('user').find((u) => u.attrs.name === 'nurse')!.getChild('offline-messages')!;
    expect(offline.getChildren('message').map((m) => m.getChildText('body'))).to.deep.equal(['Is she there? <3 & "yes"', 'Second, ünïcödé']);
    expect(offline.getChildren('message')[0]!.getChild('delay', 'urn:xmpp:delay')!.attrs.stamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const plain = document.getChildren('host').find((h) => h.attrs.jid === 'example.com')!.getChild('user')!;
    expect(plain.attrs).to.deep.equal({ name: 'benvolio', password: 'plain pass' });
  });

  it('fails on a missing directory and on a file that does not parse, naming it, and imports nothing', async () => {
    const missing = await call('import_prosody', { dir: join(work, 'nothing-here') });
    expect(missing.status).to.equal(422);
    expect(missing.body.message).to.contain('no such file or directory');

    const broken = join(work, 'broken');
    await cp(prosodyData, broken, { recursive: true });
    await writeFile(join(broken, 'localhost', 'roster', 'juliet.dat'), 'return {\n\t["romeo@localhost"] = {\n\t\t["name"] = "Romeo;\n\t};\n};\n');
    const bad = await call('import_prosody', { dir: broken });
    expect(bad.status).to.equal(422);
    expect(bad.body.message).to.contain(`${join(broken, 'localhost', 'roster', 'juliet.dat')}:3:`).and.contain('unfinished string');

    // Lua that parses but is not what Prosody stores there: refused the same way, not a server error.
    const shaped = join(work, 'shaped');
    await cp(prosodyData, shaped, { recursive: true });
    await writeFile(join(shaped, 'localhost', 'offline', 'nurse.list'), 'item("just a string");\n');
    const odd = await call('import_prosody', { dir: shaped });
    expect(odd.status).to.equal(422);
    expect(odd.body.message).to.contain(join(shaped, 'localhost', 'offline', 'nurse.list')).and.contain('expected a stanza table');

    expect(await users('localhost')).to.deep.equal(['admin', 'alice', 'bob']);
    expect(await users('example.com')).to.deep.equal([]);
    await expectChatBothWays(alice!, 'alice@localhost', bob!);
  });

  it('imports accounts that log in with their Prosody passwords and find their data, while clients chat', async () => {
    const res = await call('import_prosody', { dir: prosodyData });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    expect(await users('localhost')).to.deep.equal(['admin', 'alice', 'bob', 'juliet', 'nurse', 'romeo']);
    expect(await users('example.com')).to.deep.equal(['benvolio']);
    expect(t.logged((l) => /host elsewhere\.example is not served here/.test(l.msg ?? ''))).to.not.be.empty;
    await expectChatBothWays(alice!, 'alice@localhost', bob!);

    const juliet = await login(t, { user: 'juliet', password: 'juliet pass', mechanism: 'SCRAM-SHA-1' });
    const benvolio = await login(t, { user: 'benvolio', host: 'example.com', password: 'plain pass', mechanism: 'PLAIN' });
    let nurse: Client | undefined;
    try {
      const roster = await iqGet(juliet, xml('query', { xmlns: 'jabber:iq:roster' }));
      const romeoItem = roster.getChildren('item').find((i: any) => i.attrs.jid === 'romeo@localhost')!;
      expect(romeoItem.attrs.name).to.equal('Romeo Montague');
      expect(romeoItem.getChildren('group').map((g: any) => g.text()).sort()).to.deep.equal(['Friends', 'Verona']);

      const priv = await iqGet(juliet, xml('query', { xmlns: 'jabber:iq:private' }, xml('storage', { xmlns: 'storage:bookmarks' })));
      expect(priv.getChild('storage')!.getChild('conference')!.attrs.jid).to.equal('balcony@conference.localhost');

      // PEP goes through mod_pubsub's part of the XEP-0227 import.
      const nick = await iqGet(juliet, xml('pubsub', { xmlns: 'http://jabber.org/protocol/pubsub' }, xml('items', { node: 'http://jabber.org/protocol/nick' })), 'juliet@localhost');
      expect(nick.getChild('items')!.getChild('item')!.getChildText('nick')).to.equal('Jules');

      const vcard = await iqGet(juliet, xml('vCard', { xmlns: 'vcard-temp' }), 'romeo@localhost');
      expect(vcard.getChildText('NICKNAME')).to.equal('Romeo & <Co>');

      nurse = await login(t, { user: 'nurse', password: 'nurse pass', mechanism: 'SCRAM-SHA-1' });
      const first = next(nurse, (s) => s.name === 'message' && s.getChildText('body') === 'Is she there? <3 & "yes"');
      const second = next(nurse, (s) => s.name === 'message' && s.getChildText('body') === 'Second, ünïcödé');
      await nurse.send(xml('presence'));
      expect((await first).attrs.from).to.equal('romeo@localhost/garden');
      expect((await second).getChild('delay', 'urn:xmpp:delay')).to.not.equal(undefined);
    } finally {
      await stopAll(juliet, benvolio, nurse);
    }
  });

  it('a second import, from servicectl, shows progress and leaves the existing accounts as they are', async () => {
    const { progress, final } = await overControlSocket(t, 'import_prosody', [prosodyData]);
    expect(final.type, JSON.stringify(final)).to.equal('result');
    expect(progress.length, 'no progress reached servicectl').to.be.at.least(1);
    expect(progress.every((p) => ['files read', 'accounts imported'].includes(p.label!) && p.done <= p.total!), JSON.stringify(progress)).to.equal(true);
    expect(t.logged((l) => /the account exists here/.test(l.msg ?? ''))).to.not.be.empty;
    const juliet = await login(t, { user: 'juliet', password: 'juliet pass', mechanism: 'SCRAM-SHA-1' });
    await stopAll(juliet);
  });
});
