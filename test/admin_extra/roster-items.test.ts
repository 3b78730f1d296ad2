/**
 * add_rosteritem, delete_rosteritem, get_roster and get_roster_count with real logged-in clients: the
 * owner's interested resources get roster pushes, a local contact's side follows, presence starts and
 * stops with the subscriptions, bad input is refused with a clear error and changes nothing; a sample
 * over XML-RPC and servicectl.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { expectSilence, login, stopAll, xml, type Client } from '../support/xmpp.js';
import { ADMIN, isPush, nextPresence, nextPush, online, rosterConfig, rosterItems, sync, xmlrpcAdmin } from './roster-clients.js';

const USERS = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'gina', 'hank', 'ivan', 'judy', 'kim', 'leo', 'mia', 'ned', 'olga', 'pam'];

describe('mod_admin_extra roster items', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const connect = async (user: string, resource: string, available = true) => {
    const c = await online(t, user, resource, available);
    clients.push(c);
    return c;
  };
  const api = (command: string, args: Record<string, unknown>, prefix?: string) => t.api(command, args, { basic: ADMIN, prefix });
  const roster = async (user: string) => {
    const res = await api('get_roster', { user, host: 'localhost' });
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const add = (localuser: string, user: string, extra: { nick?: string; groups?: string[]; subs?: string; host?: string } = {}) =>
    api('add_rosteritem', { localuser, localhost: 'localhost', user, host: extra.host ?? 'localhost', nick: extra.nick ?? '', groups: extra.groups ?? [], subs: extra.subs ?? 'none' });

  before(async () => {
    t = await TestServer.start(rosterConfig(5));
    await t.bootstrapAdmin();
    for (const user of USERS) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
  });
  after(() => t.stop());

  it('add_rosteritem with both: pushes to every interested resource of both accounts, and presence flows both ways', async () => {
    const a1 = await connect('alice', 'a1');
    const a2 = await connect('alice', 'a2');
    // Logged in but never asked for the roster: no pushes for it.
    const a3 = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a3' });
    clients.push(a3);
    const atA3 = expectSilence(a3, (s) => isPush(s), 'a roster push to a resource that never asked for the roster');
    const bob = await connect('bob', 'b');

    const pushes = Promise.all([nextPush(a1, 'bob@localhost'), nextPush(a2, 'bob@localhost')]);
    const bobPush = nextPush(bob, 'alice@localhost');
    const aliceSeesBob = nextPresence(a1, undefined, 'bob@localhost/b');
    const bobSeesAlice = Promise.all([nextPresence(bob, undefined, 'alice@localhost/a1'), nextPresence(bob, undefined, 'alice@localhost/a2')]);
    const res = await add('alice', 'Bob', { nick: 'Bob', groups: ['Work', 'Friends'], subs: 'both' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);

    for (const item of await pushes) expect(item).to.deep.equal({ jid: 'bob@localhost', subscription: 'both', name: 'Bob', groups: ['Friends', 'Work'] });
    expect(await bobPush).to.deep.equal({ jid: 'alice@localhost', subscription: 'both' });
    await aliceSeesBob;
    await bobSeesAlice;

    expect(await roster('alice')).to.deep.equal([{ jid: 'bob@localhost', nick: 'Bob', subscription: 'both', pending: 'none', groups: ['Friends', 'Work'] }]);
    expect(await roster('bob')).to.deep.equal([{ jid: 'alice@localhost', nick: '', subscription: 'both', pending: 'none', groups: [] }]);
    // What the clients see agrees.
    expect(await rosterItems(a2)).to.deep.equal([{ jid: 'bob@localhost', subscription: 'both', name: 'Bob', groups: ['Friends', 'Work'] }]);
    expect(await rosterItems(bob)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'both' }]);
    // Once a3 asks for the roster, it gets the pushes.
    await atA3.proveWith(async () => {
      await rosterItems(a3);
      await add('alice', 'probe');
    }, (s) => isPush(s, 'probe@localhost'));
    const removed = nextPush(a3, 'probe@localhost');
    expect((await api('delete_rosteritem', { localuser: 'alice', localhost: 'localhost', user: 'probe', host: 'localhost' })).body).to.equal(0);
    await removed;
  });

  it("add_rosteritem with to: the owner receives the contact's presence, the contact's side says from", async () => {
    const carol = await connect('carol', 'c');
    const dave = await connect('dave', 'd');
    const atDave = expectSilence(dave, (s) => s.is('presence') && s.attrs.from?.startsWith('carol@') === true, "the presence of a contact dave is not subscribed to");
    const davePush = nextPush(dave, 'carol@localhost');
    const carolSeesDave = nextPresence(carol, undefined, 'dave@localhost/d');
    expect((await add('carol', 'dave', { subs: 'to' })).body).to.equal(0);
    expect(await davePush).to.deep.equal({ jid: 'carol@localhost', subscription: 'from' });
    await carolSeesDave;
    // Presence carol directs to him does arrive.
    await atDave.proveWith(() => carol.send(xml('presence', { to: 'dave@localhost/d' }, xml('status', {}, 'directed'))), (s) => s.is('presence') && s.attrs.from === 'carol@localhost/c' && s.getChildText('status') === 'directed');
    expect(await roster('carol')).to.deep.equal([{ jid: 'dave@localhost', nick: '', subscription: 'to', pending: 'none', groups: [] }]);
    expect(await roster('dave')).to.deep.equal([{ jid: 'carol@localhost', nick: '', subscription: 'from', pending: 'none', groups: [] }]);
  });

  it('add_rosteritem changes an item: a lower subscription stops presence on both sides, the contact keeps its own name and groups', async () => {
    expect((await add('erin', 'frank', { nick: 'Frank', groups: ['Team'], subs: 'both' })).body).to.equal(0);
    expect((await add('frank', 'erin', { nick: 'Erin', groups: ['Mates'], subs: 'both' })).body).to.equal(0);
    const erin = await connect('erin', 'e');
    const frank = await connect('frank', 'f');
    // Both subscribed: presence flows (each login probes the other).
    await nextPresence(erin, undefined, 'frank@localhost/f');

    const erinPush = nextPush(erin, 'frank@localhost');
    const frankPush = nextPush(frank, 'erin@localhost');
    const erinGone = nextPresence(frank, 'unavailable', 'erin@localhost/e');
    const frankGone = nextPresence(erin, 'unavailable', 'frank@localhost/f');
    expect((await add('erin', 'frank', { nick: 'F.', groups: [], subs: 'none' })).body).to.equal(0);
    expect(await erinPush).to.deep.equal({ jid: 'frank@localhost', subscription: 'none', name: 'F.' });
    expect(await frankPush).to.deep.equal({ jid: 'erin@localhost', subscription: 'none', name: 'Erin', groups: ['Mates'] });
    await erinGone;
    await frankGone;
  });

  it('add_rosteritem takes remote contacts, local names not registered and gateways, and only changes the owner then', async () => {
    expect((await add('gina', 'someone', { host: 'remote.example.net', subs: 'both' })).body).to.equal(0);
    expect((await add('gina', 'ghost', { subs: 'to' })).body).to.equal(0);
    expect((await add('gina', '', { host: 'gw.example.net', nick: 'Gateway' })).body).to.equal(0);
    expect(await roster('gina')).to.deep.equal([
      { jid: 'ghost@localhost', nick: '', subscription: 'to', pending: 'none', groups: [] },
      { jid: 'gw.example.net', nick: 'Gateway', subscription: 'none', pending: 'none', groups: [] },
      { jid: 'someone@remote.example.net', nick: '', subscription: 'both', pending: 'none', groups: [] },
    ]);
    expect((await api('get_roster_count', { user: 'gina', host: 'localhost' })).body).to.equal(3);
  });

  it('add_rosteritem refuses bad input with a clear error and changes nothing', async () => {
    expect((await add('hank', 'ivan', { nick: 'Ivan', groups: ['G'], subs: 'from' })).body).to.equal(0);
    const before = { hank: await roster('hank'), ivan: await roster('ivan') };
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ localuser: 'nobody' }, 404, /account nobody@localhost does not exist/],
      [{ localhost: 'elsewhere.net' }, 400, /unknown virtual host 'elsewhere.net'/],
      [{ subs: 'friends' }, 400, /subs: 'friends' is not one of none, from, to, both/],
      [{ user: 'hank' }, 400, /cannot be in its own roster/],
      [{ user: 'a b' }, 400, /user: user name contains whitespace/],
      [{ host: 'bad host' }, 400, /host: domain 'bad host' contains/],
      [{ groups: ['G', 'G'] }, 400, /the group 'G' appears twice/],
      [{ groups: ['x'.repeat(192)] }, 400, /group names are limited to 191 characters/],
      [{ nick: 'n'.repeat(1024) }, 400, /names are limited to 1023 characters/],
      [{ groups: 'G' }, 400, /groups/],
    ];
    for (const [change, status, message] of cases) {
      const res = await api('add_rosteritem', { localuser: 'hank', localhost: 'localhost', user: 'ivan', host: 'localhost', nick: 'X', groups: [], subs: 'both', ...change });
      expect(res.status, `${JSON.stringify(change)}: ${res.text}`).to.equal(status);
      expect(res.body.message, JSON.stringify(change)).to.match(message);
    }
    const missing = await api('add_rosteritem', { localuser: 'hank', localhost: 'localhost', user: 'ivan', host: 'localhost', nick: 'X', subs: 'both' });
    expect(missing.status).to.equal(400);
    expect(missing.body.message).to.match(/groups/);
    expect({ hank: await roster('hank'), ivan: await roster('ivan') }).to.deep.equal(before);
  });

  it('add_rosteritem refuses with 409 a new item for a full roster, on either side, and changes nothing', async () => {
    for (let i = 0; i < 5; i++) expect((await add('judy', `friend${i}`)).body).to.equal(0);
    const full = await add('judy', 'kim', { subs: 'both' });
    expect(full.status).to.equal(409);
    expect(full.body.message).to.match(/roster of judy@localhost would hold 6 items; max_roster_size allows 5/);
    // Changing an item already there is fine.
    expect((await add('judy', 'friend0', { nick: 'Zero' })).body).to.equal(0);
    // kim's roster has room, but judy's side would need a new item: refused before kim's changes.
    const mirrored = await add('kim', 'judy', { subs: 'both' });
    expect(mirrored.status).to.equal(409);
    expect(mirrored.body.message).to.match(/roster of judy@localhost/);
    expect(await roster('kim')).to.deep.equal([]);
    expect((await api('get_roster_count', { user: 'judy', host: 'localhost' })).body).to.equal(5);
  });

  it('add_rosteritem at API version 0 takes the groups as one text separated by ;', async () => {
    const res = await api('add_rosteritem', { localuser: 'leo', localhost: 'localhost', user: 'mia', host: 'localhost', nick: 'Mia', group: 'Friends;Team 1', subs: 'none' }, '/api/v0');
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    expect(await roster('leo')).to.deep.equal([{ jid: 'mia@localhost', nick: 'Mia', subscription: 'none', pending: 'none', groups: ['Friends', 'Team 1'] }]);
    // The current version wants the list.
    expect((await api('add_rosteritem', { localuser: 'leo', localhost: 'localhost', user: 'mia', host: 'localhost', nick: 'Mia', group: 'x', subs: 'none' })).status).to.equal(400);
  });

  it('delete_rosteritem pushes the removal to the owner and cancels the subscriptions, so the contact sees the owner go', async () => {
    expect((await add('ned', 'olga', { nick: 'Olga', subs: 'both' })).body).to.equal(0);
    const ned = await connect('ned', 'n');
    const olga = await connect('olga', 'o');
    await nextPresence(ned, undefined, 'olga@localhost/o');

    const removal = nextPush(ned, 'olga@localhost');
    // unsubscribe, then unsubscribed: olga's item goes from both through to, to none.
    const olgaPush = nextPush(olga, 'ned@localhost', 'none');
    const nedGone = nextPresence(olga, 'unavailable', 'ned@localhost/n');
    const olgaGone = nextPresence(ned, 'unavailable', 'olga@localhost/o');
    const res = await api('delete_rosteritem', { localuser: 'ned', localhost: 'localhost', user: 'olga', host: 'localhost' });
    expect(res.status, res.text).to.equal(200);
    expect(res.body).to.equal(0);
    expect(await removal).to.deep.equal({ jid: 'olga@localhost', subscription: 'remove' });
    expect(await olgaPush).to.deep.equal({ jid: 'ned@localhost', subscription: 'none' });
    await nedGone;
    await olgaGone;
    expect(await roster('ned')).to.deep.equal([]);
    expect(await roster('olga')).to.deep.equal([{ jid: 'ned@localhost', nick: '', subscription: 'none', pending: 'none', groups: [] }]);
    expect(await rosterItems(ned)).to.deep.equal([]);
  });

  it('delete_rosteritem refuses what is not there with 404, naming it', async () => {
    expect((await add('pam', 'ned')).body).to.equal(0);
    const cases: Array<[Record<string, unknown>, number, RegExp]> = [
      [{ user: 'olga' }, 404, /olga@localhost is not in the roster of pam@localhost/],
      [{ localuser: 'nobody' }, 404, /account nobody@localhost does not exist/],
      [{ localhost: 'elsewhere.net' }, 400, /unknown virtual host/],
      [{ user: 'a@b' }, 400, /user: user name contains '@'/],
    ];
    for (const [change, status, message] of cases) {
      const res = await api('delete_rosteritem', { localuser: 'pam', localhost: 'localhost', user: 'ned', host: 'localhost', ...change });
      expect(res.status, res.text).to.equal(status);
      expect(res.body.message).to.match(message);
    }
    expect((await api('get_roster_count', { user: 'pam', host: 'localhost' })).body).to.equal(1);
  });

  it('get_roster lists contacts sorted by JID with what is pending; requests from strangers are not contacts', async () => {
    const alice = await connect('alice', 'pending');
    const carol = await connect('carol', 'pending');
    // alice asks carol: "pending out" on alice's side; carol holds a request from someone not in her roster.
    const asked = nextPush(alice, 'carol@localhost');
    await alice.send(xml('presence', { type: 'subscribe', to: 'carol@localhost' }));
    expect((await asked).ask).to.equal('subscribe');
    await sync(carol);
    const aliceRoster = await roster('alice');
    expect(aliceRoster.map((c: { jid: string }) => c.jid)).to.deep.equal(['bob@localhost', 'carol@localhost']);
    expect(aliceRoster[1]).to.deep.equal({ jid: 'carol@localhost', nick: '', subscription: 'none', pending: 'out', groups: [] });
    expect((await roster('carol')).map((c: { jid: string }) => c.jid)).to.deep.equal(['dave@localhost']);

    // carol adds alice without answering: now alice is a contact whose request waits ("pending in").
    expect((await add('carol', 'alice', { nick: 'Alice' })).body).to.equal(0);
    expect((await roster('carol'))[0]).to.deep.equal({ jid: 'alice@localhost', nick: 'Alice', subscription: 'none', pending: 'in', groups: [] });
    expect((await api('get_roster_count', { user: 'carol', host: 'localhost' })).body).to.equal(2);
  });

  it('get_roster and get_roster_count refuse unknown accounts and hosts', async () => {
    for (const command of ['get_roster', 'get_roster_count']) {
      const missing = await api(command, { user: 'nobody', host: 'localhost' });
      expect(missing.status).to.equal(404);
      expect(missing.body.message).to.equal('account nobody@localhost does not exist');
      const host = await api(command, { user: 'alice', host: 'elsewhere.net' });
      expect(host.status).to.equal(400);
      expect(host.body.message).to.match(/unknown virtual host 'elsewhere.net'/);
    }
    // GET works for these scalar-only commands, as the spec's conventions allow.
    const viaGet = await t.api('get_roster_count', { user: 'carol', host: 'localhost' }, { basic: ADMIN, method: 'GET' });
    expect(viaGet.body).to.equal(2);
  });

  it('works over XML-RPC, lists as ejabberd encodes them', async () => {
    const added = await xmlrpcAdmin(t, 'add_rosteritem', { localuser: 'mia', localhost: 'localhost', user: 'leo', host: 'localhost', nick: 'Leo', groups: [{ group: 'Friends' }, { group: 'Work' }], subs: 'both' });
    expect(added).to.deep.equal({ result: { res: 0 } });
    const listed = await xmlrpcAdmin(t, 'get_roster', { user: 'mia', host: 'localhost' });
    expect(listed).to.deep.equal({
      result: { contacts: [{ jid: 'leo@localhost', nick: 'Leo', subscription: 'both', pending: 'none', groups: [{ group: 'Friends' }, { group: 'Work' }] }] },
    });
    expect(await xmlrpcAdmin(t, 'get_roster_count', { user: 'leo', host: 'localhost' })).to.deep.equal({ result: { value: 1 } });
    const refused = await xmlrpcAdmin(t, 'delete_rosteritem', { localuser: 'mia', localhost: 'localhost', user: 'nobody', host: 'localhost' });
    expect(refused.fault?.faultString).to.match(/nobody@localhost is not in the roster of mia@localhost/);
  });

  it('works through servicectl: groups comma-separated, the roster as columns', async () => {
    const added = await servicectl(t.configFile, 'add_rosteritem', 'pam', 'localhost', 'olga', 'localhost', 'Olga O', 'Friends,Work', 'to');
    expect(added.code, added.stderr).to.equal(0);
    const columns = await servicectl(t.configFile, 'get_roster', 'pam', 'localhost');
    expect(columns.stdout.split('\n')).to.include.members(['jid             nick    subscription  pending  groups', 'olga@localhost  Olga O  to            none     Friends,Work']);
    const json = await servicectl(t.configFile, '--json', 'get_roster', 'pam', 'localhost');
    expect(JSON.parse(json.stdout)).to.deep.equal(await roster('pam'));
    expect(JSON.parse(json.stdout)).to.deep.include({ jid: 'olga@localhost', nick: 'Olga O', subscription: 'to', pending: 'none', groups: ['Friends', 'Work'] });
    const count = await servicectl(t.configFile, 'get_roster_count', 'pam', 'localhost');
    expect(count).to.deep.include({ code: 0, stdout: '2\n' });
    const removed = await servicectl(t.configFile, 'delete_rosteritem', 'pam', 'localhost', 'olga', 'localhost');
    expect(removed.code, removed.stderr).to.equal(0);
    const again = await servicectl(t.configFile, 'delete_rosteritem', 'pam', 'localhost', 'olga', 'localhost');
    expect(again.code).to.equal(1);
    expect(again.stderr).to.match(/olga@localhost is not in the roster of pam@localhost/);
    const badSubs = await servicectl(t.configFile, 'add_rosteritem', 'pam', 'localhost', 'olga', 'localhost', 'O', '', 'sideways');
    expect(badSubs.code).to.equal(2);
  });

  it('says which module to enable when mod_roster is not', async () => {
    const bare = await TestServer.start({ ...rosterConfig(), modules: { mod_http_api: {}, mod_admin_extra: {} } });
    try {
      await bare.bootstrapAdmin();
      const res = await bare.api('get_roster', { user: 'admin', host: 'localhost' }, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.equal('get_roster needs mod_roster, which is not enabled: add it to modules');
    } finally {
      await bare.stop();
    }
  });
});
