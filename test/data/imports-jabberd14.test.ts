/**
 * import_file and import_dir with jabberd 1.4 spool files (test/fixtures/jabberd14/, written after the xdb_file
 * format) on a running server with clients connected: the accounts log in with their jabberd passwords and find
 * their roster, vCard, private XML and offline messages (with their old delay stamps); what is not imported
 * (last activity, a hashed password) is said. import_dir reports progress to servicectl's control client. A
 * missing file and a file that is not well-formed fail, naming the file and line, and import nothing, even
 * when the other files of the directory are fine.
 */
import { expect } from 'chai';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertSpoolFile } from '../../kernel/src/data/imports/jabberd14.js';
import { ADMIN } from '../support/admin-api.js';
import { TestServer } from '../support/server.js';
import { overControlSocket } from '../support/cli.js';
import { expectChatBothWays, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { clientsOnline } from './clients-online.js';


/** The payload (first child) of the answer to an IQ get. */
async function iqGet(client: Client, payload: Element, to?: string): Promise<Element> {
  const result = await client.iqCaller.request(xml('iq', to ? { type: 'get', to } : { type: 'get' }, payload));
  return result.getChildElements()[0]!;
}
const FIXTURES = new URL('../fixtures/jabberd14/', import.meta.url).pathname;
const HOST = 'example.com';

describe('import_file and import_dir (jabberd 1.4 spool)', function () {
  this.timeout(60_000);
  let work: string;
  let t: TestServer;
  let alice: Client | undefined;
  let bob: Client | undefined;
  const call = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const users = async () => (await call('registered_users', { host: HOST })).body as string[];

  before(async () => {
    work = await mkdtemp(join(tmpdir(), 'jabberd14-import-'));
    await cp(join(FIXTURES, 'spool'), join(work, 'spool'), { recursive: true });
    const config = xmppConfig({ mod_roster: {}, mod_presence: {}, mod_vcard: {}, mod_private: {}, mod_offline: {}, mod_admin_extra: {} });
    config.hosts = ['localhost', HOST];
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    ({ alice, bob } = await clientsOnline(t));
  });

  after(async () => {
    await stopAll(alice, bob);
    await t?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('converts a spool file into the XEP-0227 document the import takes', async () => {
    const { document, notes } = await convertSpoolFile(join(FIXTURES, 'spool', HOST, 'juliet.xml'));
    const user = document.getChild('host')!.getChild('user')!;
    expect(document.getChild('host')!.attrs.jid).to.equal(HOST);
    expect(user.attrs).to.deep.equal({ name: 'juliet', password: 'balcony&moon' });
    expect(user.getChild('query', 'jabber:iq:roster')!.toString()).to.equal(
      "<query xmlns='jabber:iq:roster'><item jid='romeo@example.com' name='Romeo' subscription='both'><group>Lovers</group><group>Verona</group></item>" +
        "<item jid='tybalt@capulet.lit' subscription='none' ask='subscribe'/></query>",
    );
    expect(user.getChild('query', 'jabber:iq:private')!.toString()).to.equal(
      "<query xmlns='jabber:iq:private'><storage xmlns='storage:bookmarks'><conference jid='balcony@conference.example.com' name='Balcony' autojoin='1'><nick>Juliet</nick></conference></storage></query>",
    );
    const messages = user.getChild('offline-messages')!.getChildren('message');
    expect(messages.map((m) => m.getChild('delay', 'urn:xmpp:delay')!.attrs.stamp)).to.deep.equal(['2003-01-01T12:34:56Z', '2003-01-02T08:00:00Z']);
    expect(user.getChild('vCard', 'vcard-temp')!.getChildText('FN')).to.equal('Juliet Capulet');
    expect(notes.map((n) => n.reason)).to.deep.equal(["juliet@example.com: <query xmlns='jabber:iq:last'> is not imported"]);
  });

  it('fails on a missing file and on one that is not well-formed, naming it, and imports nothing', async () => {
    const missing = await call('import_file', { file: join(work, 'spool', HOST, 'nobody.xml') });
    expect(missing.status).to.equal(422);
    expect(missing.body.message).to.contain('nobody.xml').and.contain('no such file or directory');

    const bad = join(FIXTURES, 'broken', HOST, 'bad.xml');
    const one = await call('import_file', { file: bad });
    expect(one.status).to.equal(422);
    expect(one.body.message).to.contain(bad).and.match(/not well-formed XML: .*\(line \d+, column \d+\)/);

    // A directory whose other files are fine: still nothing, since every file is read before anything is written.
    const mixed = join(work, 'mixed', HOST);
    await cp(join(FIXTURES, 'spool', HOST), mixed, { recursive: true });
    await cp(bad, join(mixed, 'zz-bad.xml'));
    const dir = await call('import_dir', { file: mixed });
    expect(dir.status).to.equal(422);
    expect(dir.body.message).to.contain('zz-bad.xml').and.contain('nothing was imported');
    expect(await users()).to.deep.equal([]);
    await expectChatBothWays(alice!, 'alice@localhost', bob!);
  });

  it('import_file imports one account, which logs in with its jabberd password', async () => {
    const res = await call('import_file', { file: join(work, 'spool', HOST, 'romeo.xml') });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(`Imported 1 account(s) on 1 host(s) (1 roster) from ${join(work, 'spool', HOST, 'romeo.xml')}`);
    expect(await users()).to.deep.equal(['romeo']);
    const romeo = await login(t, { user: 'romeo', host: HOST, password: 'montague' });
    try {
      const roster = await iqGet(romeo, xml('query', { xmlns: 'jabber:iq:roster' }));
      expect(roster.getChildren('item').map((i: any) => `${i.attrs.jid} ${i.attrs.subscription}`)).to.deep.equal(['juliet@example.com both']);
    } finally {
      await stopAll(romeo);
    }
  });

  it('import_dir imports the rest with progress for servicectl, and says what it left out', async () => {
    const { progress, final } = await overControlSocket(t, 'import_dir', [join(work, 'spool', HOST)]);
    expect(final.type, JSON.stringify(final)).to.equal('result');
    const text = JSON.stringify(final);
    expect(text).to.contain('Imported 2 account(s) on 1 host(s) (2 roster, 1 vcard, 2 offline, 1 private)');
    expect(text).to.contain('romeo@example.com account: the account exists here');
    expect(text).to.contain("juliet@example.com: <query xmlns='jabber:iq:last'> is not imported");
    expect(text).to.contain("<crypt xmlns='jabber:iq:auth:crypt'> is not imported");
    expect(progress.length, 'no progress reached servicectl').to.be.at.least(1);
    expect(progress.every((p) => p.total === undefined || p.done <= p.total)).to.equal(true);
    expect(await users()).to.deep.equal(['juliet', 'nurse', 'romeo']);
    await expectChatBothWays(alice!, 'alice@localhost', bob!);

    const juliet = await login(t, { user: 'juliet', host: HOST, password: 'balcony&moon' });
    try {
      const vcard = await iqGet(juliet, xml('vCard', { xmlns: 'vcard-temp' }));
      expect(vcard.getChildText('NICKNAME')).to.equal('Jules');
      const priv = await iqGet(juliet, xml('query', { xmlns: 'jabber:iq:private' }, xml('storage', { xmlns: 'storage:bookmarks' })));
      expect(priv.getChild('storage')!.getChild('conference')!.getChildText('nick')).to.equal('Juliet');
      const first = next(juliet, (s) => s.name === 'message' && s.getChildText('body') === 'But soft! What light through yonder window breaks?');
      const second = next(juliet, (s) => s.name === 'message' && s.getChildText('subject') === 'Dinner');
      await juliet.send(xml('presence'));
      expect((await first).getChild('delay', 'urn:xmpp:delay')!.attrs.stamp).to.match(/^2003-01-01T12:34:56/);
      expect((await second).getChildText('body')).to.equal('Come down, <now> & quickly');
    } finally {
      await stopAll(juliet);
    }
  });
});
