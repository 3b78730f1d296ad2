/**
 * push_roster, push_roster_all and push_alltoall with real logged-in clients: rosters from ejabberd's
 * Erlang-terms file and from JSON, pushes and presence as the clients see them, the contact's side kept in
 * step, and every kind of bad file or argument refused with its line and nothing changed; samples over
 * XML-RPC and servicectl.
 */
import { expect } from 'chai';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { servicectl } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { expectSilence, login, stopAll, xml, type Client } from '../support/xmpp.js';
import { ADMIN, isPush, nextPresence, nextPush, online, rosterConfig, rosterItems, xmlrpcAdmin } from './roster-clients.js';

const LOCAL = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan', 'judy'];
const REMOTE_HOST = 'example.com';
const TEAM = ['ann', 'ben', 'cid', 'dot'];

describe('mod_admin_extra push_roster, push_roster_all, push_alltoall', () => {
  let t: TestServer;
  let dataDir: string;
  const clients: Client[] = [];
  const connect = async (user: string, resource: string) => {
    const c = await online(t, user, resource);
    clients.push(c);
    return c;
  };
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const roster = async (user: string, host = 'localhost') => {
    const res = await api('get_roster', { user, host });
    expect(res.status, res.text).to.equal(200);
    return res.body as Array<{ jid: string; nick: string; subscription: string; pending: string; groups: string[] }>;
  };
  const rosters = async (users: string[], host = 'localhost') => Object.fromEntries(await Promise.all(users.map(async (u) => [u, await roster(u, host)])));
  /** Writes a file under data_dir and answers its path relative to it. */
  const file = async (name: string, text: string) => {
    await writeFile(join(dataDir, name), text);
    return name;
  };

  before(async () => {
    t = await TestServer.start(rosterConfig(6));
    dataDir = join(t.dir, 'data');
    await t.bootstrapAdmin();
    for (const user of LOCAL) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    for (const user of TEAM) await t.server.services.accounts.register(user, REMOTE_HOST, `${user}-pw`);
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
  });
  after(() => t.stop());

  describe('push_roster', () => {
    it("adds ejabberd's Erlang-terms file to the user's roster with both, skipping the user itself; local contacts follow and presence flows", async () => {
      const alice = await connect('alice', 'a');
      const bob = await connect('bob', 'b');
      const path = await file(
        'workers.txt',
        '%% Template roster\n[{<<"alice">>,<<"localhost">>,<<"Workers">>,<<"Alice">>},\n {<<"bob">>,<<"localhost">>,<<"Workers">>,<<"User Bob">>},\n {"pat", "remote.example.net", "Partners", "Pat"}].\n',
      );
      const alicePushes = Promise.all([nextPush(alice, 'bob@localhost'), nextPush(alice, 'pat@remote.example.net')]);
      const bobPush = nextPush(bob, 'alice@localhost');
      const bobSeesAlice = nextPresence(bob, undefined, 'alice@localhost/a');
      const aliceSeesBob = nextPresence(alice, undefined, 'bob@localhost/b');
      const res = await api('push_roster', { file: path, user: 'alice', host: 'localhost' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.equal(0);
      expect(await alicePushes).to.deep.equal([
        { jid: 'bob@localhost', subscription: 'both', name: 'User Bob', groups: ['Workers'] },
        { jid: 'pat@remote.example.net', subscription: 'both', name: 'Pat', groups: ['Partners'] },
      ]);
      expect(await bobPush).to.deep.equal({ jid: 'alice@localhost', subscription: 'both' });
      await bobSeesAlice;
      await aliceSeesBob;
      expect(await roster('alice')).to.deep.equal([
        { jid: 'bob@localhost', nick: 'User Bob', subscription: 'both', pending: 'none', groups: ['Workers'] },
        { jid: 'pat@remote.example.net', nick: 'Pat', subscription: 'both', pending: 'none', groups: ['Partners'] },
      ]);
      expect(await roster('bob')).to.deep.equal([{ jid: 'alice@localhost', nick: '', subscription: 'both', pending: 'none', groups: [] }]);
    });

    it('reads JSON from an absolute path; an existing item keeps its name when the nick is empty and gains the group', async () => {
      await api('add_rosteritem', { localuser: 'carol', localhost: 'localhost', user: 'dave', host: 'localhost', nick: 'Dave', groups: ['Family'], subs: 'none' });
      const path = join(dataDir, 'carol.json');
      await writeFile(path, JSON.stringify([{ user: 'dave', host: 'localhost', group: 'Workers', nick: '' }, ['erin', 'localhost', '', 'Erin']], null, 2));
      const res = await api('push_roster', { file: path, user: 'carol', host: 'localhost' });
      expect(res.status, res.text).to.equal(200);
      expect(await roster('carol')).to.deep.equal([
        { jid: 'dave@localhost', nick: 'Dave', subscription: 'both', pending: 'none', groups: ['Family', 'Workers'] },
        { jid: 'erin@localhost', nick: 'Erin', subscription: 'both', pending: 'none', groups: [] },
      ]);
      // Pushing the same file again changes nothing.
      const carol = await connect('carol', 'c');
      const seen = expectSilence(carol, (s) => s.is('iq') && s.attrs.type === 'set', 'a roster push for a file that changes nothing');
      expect((await api('push_roster', { file: path, user: 'carol', host: 'localhost' })).body).to.equal(0);
      expect(await rosterItems(carol)).to.have.length(2);
      // A file that does change something is pushed.
      const probe = join(dataDir, 'carol-probe.json');
      await writeFile(probe, JSON.stringify([{ user: 'dave', host: 'localhost', group: 'Probe', nick: '' }]));
      await seen.proveWith(() => api('push_roster', { file: probe, user: 'carol', host: 'localhost' }), (s) => isPush(s, 'dave@localhost'));
    });

    it('refuses a missing, unreadable or malformed file, a bad entry or an unknown account, saying where, and changes nothing', async () => {
      await mkdir(join(dataDir, 'a-directory'));
      const good = await file('good.txt', '[{"gina","localhost","G","Gina"}].');
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ file: 'nope.txt' }, 404, /the roster file .*\/data\/nope\.txt does not exist/],
        [{ file: '/definitely/not/here.txt' }, 404, /the roster file \/definitely\/not\/here\.txt does not exist/],
        [{ file: 'a-directory' }, 400, /cannot read the roster file .*a-directory: EISDIR \(it is a directory\)/],
        [{ file: '' }, 400, /file must be a path/],
        [{ file: await file('no-stop.txt', '[{"gina","localhost","G","Gina"}]') }, 400, /no-stop\.txt line 1: expected '\.' after the list .*\.json is read as JSON/],
        [{ file: await file('short.txt', '[\n  {"gina","localhost","G","Gina"},\n  {"ivan","localhost","G"}\n].') }, 400, /short\.txt line 3: a tuple has 3 elements; it needs 4/],
        [{ file: await file('bad.json', '[\n  ["gina", "localhost", "G", "Gina"],\n  {"user": "ivan", "host": "localhost", "grop": "G"}\n]') }, 400, /bad\.json line 3: unknown field 'grop'/],
        [{ file: await file('bad-jid.txt', '[\n{"gina","localhost","G","Gina"},\n{"a b","localhost","G","X"}].') }, 400, /bad-jid\.txt line 3: user: user name contains whitespace/],
        [{ file: await file('twice.txt', '[{"gina","localhost","G","Gina"},\n{"Gina","LocalHost","H","G2"}].') }, 400, /twice\.txt lists gina@localhost twice, on lines 1 and 2/],
        [{ file: await file('long-group.txt', `[{"gina","localhost","${'x'.repeat(192)}","Gina"}].`) }, 400, /long-group\.txt line 1: group names are limited to 191 characters/],
        [{ file: good, user: 'nobody' }, 404, /account nobody@localhost does not exist/],
        [{ file: good, host: 'elsewhere.net' }, 400, /unknown virtual host 'elsewhere.net'/],
      ];
      for (const [change, status, message] of cases) {
        const res = await api('push_roster', { file: good, user: 'hank', host: 'localhost', ...change });
        expect(res.status, `${JSON.stringify(change)}: ${res.text}`).to.equal(status);
        expect(res.body.message, JSON.stringify(change)).to.match(message);
      }
      await writeFile(join(dataDir, 'not-utf8.txt'), Buffer.from([0x5b, 0x7b, 0x22, 0xff, 0x22, 0x7d, 0x5d, 0x2e]));
      const notUtf8 = await api('push_roster', { file: 'not-utf8.txt', user: 'hank', host: 'localhost' });
      expect(notUtf8.status).to.equal(400);
      expect(notUtf8.body.message).to.match(/not-utf8\.txt is not UTF-8 text/);
      expect(await rosters(['hank', 'gina', 'ivan'])).to.deep.equal({ hank: [], gina: [], ivan: [] });
    });

    it('refuses with 409 a file that would overflow a roster, on either side, and changes nothing', async () => {
      const many = Array.from({ length: 7 }, (_, i) => `{"c${i}","remote.example.net","G","C${i}"}`);
      const tooMany = await api('push_roster', { file: await file('seven.txt', `[${many.join(',')}].`), user: 'ivan', host: 'localhost' });
      expect(tooMany.status).to.equal(409);
      expect(tooMany.body.message).to.match(/roster of ivan@localhost would hold 7 items; max_roster_size allows 6: nothing was changed/);
      // judy's roster is full: ivan's file lists her, and her side would need a new item.
      for (let i = 0; i < 6; i++) await api('add_rosteritem', { localuser: 'judy', localhost: 'localhost', user: `f${i}`, host: 'remote.example.net', nick: '', groups: [], subs: 'none' });
      const fullContact = await api('push_roster', { file: await file('judy.txt', '[{"frank","localhost","G","Frank"},{"judy","localhost","G","Judy"}].'), user: 'ivan', host: 'localhost' });
      expect(fullContact.status).to.equal(409);
      expect(fullContact.body.message).to.match(/roster of judy@localhost would hold 7 items/);
      expect(await rosters(['ivan', 'frank'])).to.deep.equal({ ivan: [], frank: [] });
    });
  });

  describe('push_roster_all', () => {
    it('gives every listed account every other one, with both, pushed to their clients', async () => {
      const ann = await login(t, { user: 'ann', password: 'ann-pw', host: REMOTE_HOST, resource: 'a' });
      clients.push(ann);
      await rosterItems(ann);
      const pushes = Promise.all([nextPush(ann, 'ben@example.com'), nextPush(ann, 'cid@example.com')]);
      const path = await file('team.txt', '[{<<"ann">>,<<"example.com">>,<<"Team">>,<<"Ann">>},\n {<<"ben">>,<<"example.com">>,<<"Team">>,<<"Ben">>},\n {<<"cid">>,<<"example.com">>,<<"Leads">>,<<"Cid">>}].');
      const res = await api('push_roster_all', { file: path });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.equal(0);
      expect(await pushes).to.deep.equal([
        { jid: 'ben@example.com', subscription: 'both', name: 'Ben', groups: ['Team'] },
        { jid: 'cid@example.com', subscription: 'both', name: 'Cid', groups: ['Leads'] },
      ]);
      const item = (jid: string, nick: string, group: string) => ({ jid, nick, subscription: 'both', pending: 'none', groups: [group] });
      expect(await rosters(['ann', 'ben', 'cid', 'dot'], REMOTE_HOST)).to.deep.equal({
        ann: [item('ben@example.com', 'Ben', 'Team'), item('cid@example.com', 'Cid', 'Leads')],
        ben: [item('ann@example.com', 'Ann', 'Team'), item('cid@example.com', 'Cid', 'Leads')],
        cid: [item('ann@example.com', 'Ann', 'Team'), item('ben@example.com', 'Ben', 'Team')],
        dot: [],
      });
    });

    it('refuses a listed account that does not exist or is not local, saying on which line, and changes nothing', async () => {
      const before = await rosters(['ann', 'ben', 'dot'], REMOTE_HOST);
      const unknown = await api('push_roster_all', { file: await file('ghost.txt', '[{"dot","example.com","T","Dot"},\n{"ghost","example.com","T","Ghost"}].') });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.message).to.match(/ghost\.txt line 2: account ghost@example\.com does not exist/);
      const remote = await api('push_roster_all', { file: await file('remote.txt', '[{"dot","example.com","T","Dot"},\n\n{"pat","remote.example.net","T","Pat"}].') });
      expect(remote.status).to.equal(400);
      expect(remote.body.message).to.match(/remote\.txt line 3: unknown virtual host 'remote\.example\.net'/);
      const missing = await api('push_roster_all', { file: 'missing.txt' });
      expect(missing.status).to.equal(404);
      expect(await rosters(['ann', 'ben', 'dot'], REMOTE_HOST)).to.deep.equal(before);
    });
  });

  describe('push_alltoall', () => {
    it('gives every account of the host every other one in the group, with both; existing items keep their name and groups', async () => {
      const dot = await login(t, { user: 'dot', password: 'dot-pw', host: REMOTE_HOST, resource: 'd' });
      clients.push(dot);
      await rosterItems(dot);
      const pushes = Promise.all(['ann', 'ben', 'cid'].map((u) => nextPush(dot, `${u}@example.com`)));
      const res = await api('push_alltoall', { host: REMOTE_HOST, group: 'Everybody' });
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.equal(0);
      for (const item of await pushes) expect(item).to.deep.include({ subscription: 'both', groups: ['Everybody'] });
      const item = (user: string, nick: string, groups: string[]) => ({ jid: `${user}@example.com`, nick, subscription: 'both', pending: 'none', groups });
      expect(await rosters(TEAM, REMOTE_HOST)).to.deep.equal({
        ann: [item('ben', 'Ben', ['Everybody', 'Team']), item('cid', 'Cid', ['Everybody', 'Leads']), item('dot', 'dot', ['Everybody'])],
        ben: [item('ann', 'Ann', ['Everybody', 'Team']), item('cid', 'Cid', ['Everybody', 'Leads']), item('dot', 'dot', ['Everybody'])],
        cid: [item('ann', 'Ann', ['Everybody', 'Team']), item('ben', 'Ben', ['Everybody', 'Team']), item('dot', 'dot', ['Everybody'])],
        dot: [item('ann', 'ann', ['Everybody']), item('ben', 'ben', ['Everybody']), item('cid', 'cid', ['Everybody'])],
      });
      // Presence now flows between all of them.
      const ben = await login(t, { user: 'ben', password: 'ben-pw', host: REMOTE_HOST, resource: 'b' });
      clients.push(ben);
      const seen = nextPresence(dot, undefined, 'ben@example.com/b');
      await dot.send(xml('presence'));
      await ben.send(xml('presence'));
      await seen;
    });

    it('refuses an unknown host or a bad group, and a host whose rosters would overflow, changing nothing', async () => {
      const cases: Array<[Record<string, unknown>, number, RegExp]> = [
        [{ host: 'elsewhere.net' }, 400, /unknown virtual host 'elsewhere.net'/],
        [{ group: '' }, 400, /group must not be empty/],
        [{ group: 'g'.repeat(192) }, 400, /group names are limited to 191 characters/],
        // localhost has 11 accounts: 10 contacts each, max_roster_size is 6.
        [{ host: 'localhost' }, 409, /would hold \d+ items; max_roster_size allows 6: nothing was changed/],
      ];
      const before = await rosters(['bob', 'gina']);
      for (const [change, status, message] of cases) {
        const res = await api('push_alltoall', { host: REMOTE_HOST, group: 'Other', ...change });
        expect(res.status, res.text).to.equal(status);
        expect(res.body.message).to.match(message);
      }
      expect(await rosters(['bob', 'gina'])).to.deep.equal(before);
      expect((await roster('ann', REMOTE_HOST)).every((i) => !i.groups.includes('Other'))).to.equal(true);
    });
  });

  describe('other frontends', () => {
    it('push_roster works over XML-RPC and servicectl', async () => {
      const path = await file('frank.txt', '[{"gina","localhost","Friends","Gina"}].');
      expect(await xmlrpcAdmin(t, 'push_roster', { file: path, user: 'frank', host: 'localhost' })).to.deep.equal({ result: { res: 0 } });
      expect(await roster('frank')).to.deep.equal([{ jid: 'gina@localhost', nick: 'Gina', subscription: 'both', pending: 'none', groups: ['Friends'] }]);
      const ctl = await servicectl(t.configFile, 'push_roster', join(dataDir, await file('ivan.txt', '[{<<"hank">>,<<"localhost">>,<<"Crew">>,<<"Hank">>}].')), 'ivan', 'localhost');
      expect(ctl).to.deep.include({ code: 0, stdout: '', stderr: '' });
      expect(await roster('ivan')).to.deep.equal([{ jid: 'hank@localhost', nick: 'Hank', subscription: 'both', pending: 'none', groups: ['Crew'] }]);
      const missing = await servicectl(t.configFile, 'push_roster_all', 'missing.txt');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.match(/the roster file .*missing\.txt does not exist/);
    });
  });
});
