/**
 * mod_admin_extra's srg_* commands with mod_shared_roster, against real clients: what the commands store
 * and answer, and what logged-in clients get from it — roster items subscribed both ways in the group's
 * label, pushes when membership, display or labels change, presence between group members, @all@ and
 * @online@, roster versions, shared contacts that cannot be removed; bad input refused with nothing changed.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { TestServer } from '../support/server.js';
import { collect, expectSilence, login, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import {
  ADMIN,
  NS_ROSTER,
  config,
  expectIqError,
  isPush,
  nextPresence,
  nextPush,
  online,
  pause,
  pushedItem,
  rosterGet,
  rosterItems,
  rosterSet,
  xmlrpcAsAdmin,
} from './shared-roster-support.js';

describe('mod_admin_extra shared roster groups', () => {
  let t: TestServer;
  const clients: Client[] = [];
  const groups: Array<{ group: string; host: string }> = [];
  const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  /** The body of a successful call; fails the test with the error otherwise. */
  const ok = async (command: string, args: Record<string, unknown>) => {
    const res = await api(command, args);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };
  /** A group this test creates (deleted after it). */
  const create = async (group: string, display: string[], label = '', host = 'localhost') => {
    expect(await ok('srg_create', { group, host, label, description: `${group} description`, display })).to.equal(0);
    groups.push({ group, host });
  };
  const addMember = async (user: string, group: string, host = 'localhost', grouphost = 'localhost') => {
    expect(await ok('srg_user_add', { user, host, group, grouphost })).to.equal(0);
  };
  const connect = async (user: string, options: { host?: string; resource?: string; available?: boolean } = {}) => {
    const c = await online(t, user, options);
    clients.push(c);
    return c;
  };

  before(async () => {
    t = await TestServer.start(config());
    await t.bootstrapAdmin();
    for (const user of ['alice', 'bob', 'carol', 'dave', 'frank', 'gina']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    await t.server.services.accounts.register('erin', 'example.com', 'erin-pw');
  });
  afterEach(async () => {
    await stopAll(...clients.splice(0));
    for (const { group, host } of groups.splice(0)) await api('srg_delete', { group, host });
    // Let the server finish the sessions before the next test.
    await pause(100);
  });
  after(() => t.stop());

  describe('the groups themselves', () => {
    it('creates, lists, describes, changes and deletes groups', async () => {
      await create('team', ['team'], 'Team');
      expect(await ok('srg_add', { group: 'bare', host: 'localhost' })).to.equal(0);
      groups.push({ group: 'bare', host: 'localhost' });
      expect(await ok('srg_list', { host: 'localhost' })).to.deep.equal(['bare', 'team']);
      expect(await ok('srg_list', { host: 'example.com' })).to.deep.equal([]);

      expect(await ok('srg_get_info', { group: 'team', host: 'localhost' })).to.deep.equal([
        { key: 'label', value: 'Team' },
        { key: 'description', value: 'team description' },
        { key: 'displayed_groups', value: 'team' },
        { key: 'all_users', value: 'false' },
        { key: 'online_users', value: 'false' },
      ]);
      expect(await ok('srg_get_info', { group: 'bare', host: 'localhost' })).to.deep.equal([
        { key: 'label', value: '' },
        { key: 'description', value: '' },
        { key: 'displayed_groups', value: '' },
        { key: 'all_users', value: 'false' },
        { key: 'online_users', value: 'false' },
      ]);
      expect(await ok('srg_get_displayed', { group: 'team', host: 'localhost' })).to.deep.equal(['team']);
      expect(await ok('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal([]);

      expect(await ok('srg_set_info', { group: 'team', host: 'localhost', key: 'label', value: 'Crew ✓' })).to.equal(0);
      expect(await ok('srg_set_info', { group: 'team', host: 'localhost', key: 'description', value: 'The crew' })).to.equal(0);
      const info = await ok('srg_get_info', { group: 'team', host: 'localhost' });
      expect(info.slice(0, 2)).to.deep.equal([
        { key: 'label', value: 'Crew ✓' },
        { key: 'description', value: 'The crew' },
      ]);

      // Displayed groups keep the order they were added in.
      expect(await ok('srg_add_displayed', { group: 'bare', host: 'localhost', add: 'team' })).to.equal(0);
      expect(await ok('srg_add_displayed', { group: 'bare', host: 'localhost', add: 'bare' })).to.equal(0);
      expect(await ok('srg_get_displayed', { group: 'bare', host: 'localhost' })).to.deep.equal(['team', 'bare']);
      expect((await ok('srg_get_info', { group: 'bare', host: 'localhost' }))[2]).to.deep.equal({ key: 'displayed_groups', value: 'team, bare' });
      expect(await ok('srg_del_displayed', { group: 'bare', host: 'localhost', del: 'bare' })).to.equal(0);
      expect(await ok('srg_get_displayed', { group: 'bare', host: 'localhost' })).to.deep.equal(['team']);

      // A deleted group leaves the lists of the groups that displayed it.
      expect(await ok('srg_delete', { group: 'team', host: 'localhost' })).to.equal(0);
      expect(await ok('srg_list', { host: 'localhost' })).to.deep.equal(['bare']);
      expect(await ok('srg_get_displayed', { group: 'bare', host: 'localhost' })).to.deep.equal([]);
    });

    it('takes the version-0 display string, separated by \\n, at /api/v0', async () => {
      const res = await t.api('srg_create', { group: 'old', host: 'localhost', label: 'Old', description: '', display: 'old\\nnew' }, { basic: ADMIN, prefix: '/api/v0' });
      expect(res.status, res.text).to.equal(404);
      expect(res.body.message).to.equal("shared roster group 'new' does not exist on localhost");
      await create('new', []);
      const created = await t.api('srg_create', { group: 'old', host: 'localhost', label: 'Old', description: '', display: 'old\\nnew' }, { basic: ADMIN, prefix: '/api/v0' });
      expect(created.body).to.equal(0);
      groups.push({ group: 'old', host: 'localhost' });
      expect(await ok('srg_get_displayed', { group: 'old', host: 'localhost' })).to.deep.equal(['old', 'new']);
    });

    it('refuses bad input with an error that names it, and changes nothing', async () => {
      await create('team', ['team'], 'Team');
      await addMember('alice', 'team');
      const before = {
        list: await ok('srg_list', { host: 'localhost' }),
        info: await ok('srg_get_info', { group: 'team', host: 'localhost' }),
        members: await ok('srg_get_members', { group: 'team', host: 'localhost' }),
      };
      const refused = async (command: string, args: Record<string, unknown>, status: number, message: RegExp | string) => {
        const res = await api(command, args);
        expect(res.status, `${command} ${JSON.stringify(args)}: ${res.text}`).to.equal(status);
        if (typeof message === 'string') expect(res.body.message).to.equal(message);
        else expect(res.body.message).to.match(message);
      };
      const create4 = { label: 'L', description: 'D', display: [] };
      await refused('srg_create', { group: 'team', host: 'localhost', ...create4 }, 409, "shared roster group 'team' already exists on localhost");
      await refused('srg_add', { group: 'team', host: 'localhost' }, 409, "shared roster group 'team' already exists on localhost");
      await refused('srg_create', { group: 'x', host: 'nowhere.org', ...create4 }, 400, /^argument 'host': unknown virtual host 'nowhere\.org'/);
      await refused('srg_create', { group: 'x', host: 'localhost', ...create4, display: ['ghost'] }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_create', { group: 'x', host: 'localhost', ...create4, display: ['team', 'team'] }, 400, /^argument 'display': the group 'team' appears twice/);
      await refused('srg_create', { group: 'x', host: 'localhost', ...create4, display: ['team@nowhere.org'] }, 400, /^argument 'display': unknown virtual host 'nowhere\.org'/);
      await refused('srg_create', { group: 'a@b', host: 'localhost', ...create4 }, 400, /^argument 'group': 'a@b' is not a group identifier/);
      await refused('srg_create', { group: '', host: 'localhost', ...create4 }, 400, /^argument 'group': a group identifier cannot be empty/);
      await refused('srg_create', { group: 'x', host: 'localhost', ...create4, label: 'l'.repeat(192) }, 400, /^argument 'label': labels are limited to 191 characters/);
      await refused('srg_create', { group: 'x', host: 'localhost', label: 'L', description: 'D' }, 400, /missing argument 'display'/);
      await refused('srg_get_info', { group: 'ghost', host: 'localhost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_get_members', { group: 'ghost', host: 'localhost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_get_displayed', { group: 'ghost', host: 'localhost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_delete', { group: 'ghost', host: 'localhost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_list', { host: 'nowhere.org' }, 400, /^argument 'host': unknown virtual host/);
      await refused('srg_set_info', { group: 'team', host: 'localhost', key: 'displayed_groups', value: 'x' }, 400, /^argument 'key': unknown key 'displayed_groups': the keys that can be set are label and description/);
      await refused('srg_set_info', { group: 'team', host: 'localhost', key: 'label', value: 'l'.repeat(192) }, 400, /^argument 'value': labels are limited/);
      await refused('srg_set_info', { group: 'ghost', host: 'localhost', key: 'label', value: 'x' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_user_add', { user: 'ghost', host: 'localhost', group: 'team', grouphost: 'localhost' }, 404, 'account ghost@localhost does not exist');
      await refused('srg_user_add', { user: 'bob', host: 'nowhere.org', group: 'team', grouphost: 'localhost' }, 400, /^argument 'host': unknown virtual host/);
      await refused('srg_user_add', { user: 'bob', host: 'localhost', group: 'team', grouphost: 'nowhere.org' }, 400, /^argument 'grouphost': unknown virtual host/);
      await refused('srg_user_add', { user: 'bob', host: 'localhost', group: 'ghost', grouphost: 'localhost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_user_add', { user: 'a b', host: 'localhost', group: 'team', grouphost: 'localhost' }, 400, /^argument 'user'/);
      await refused('srg_user_add', { user: 'Alice', host: 'localhost', group: 'team', grouphost: 'localhost' }, 409, "alice@localhost is already a member of shared roster group 'team' on localhost");
      await refused('srg_user_del', { user: 'bob', host: 'localhost', group: 'team', grouphost: 'localhost' }, 404, "bob@localhost is not a member of shared roster group 'team' on localhost");
      await refused('srg_user_del', { user: '@all@', host: 'localhost', group: 'team', grouphost: 'localhost' }, 404, "@all@ is not a member of shared roster group 'team' on localhost");
      await refused('srg_add_displayed', { group: 'team', host: 'localhost', add: 'ghost' }, 404, "shared roster group 'ghost' does not exist on localhost");
      await refused('srg_add_displayed', { group: 'team', host: 'localhost', add: 'team' }, 409, "shared roster group 'team' on localhost already displays 'team'");
      await refused('srg_del_displayed', { group: 'team', host: 'localhost', del: 'other' }, 404, "shared roster group 'team' on localhost does not display 'other'");
      await refused('srg_del_displayed', { group: 'ghost', host: 'localhost', del: 'team' }, 404, "shared roster group 'ghost' does not exist on localhost");

      expect(await ok('srg_list', { host: 'localhost' })).to.deep.equal(before.list);
      expect(await ok('srg_get_info', { group: 'team', host: 'localhost' })).to.deep.equal(before.info);
      expect(await ok('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(before.members);
    });
  });

  describe('what members see', () => {
    it('members of a group that displays itself see each other subscribed both ways, with presence', async () => {
      await create('team', ['team'], 'Team');
      const alice = await connect('alice');
      const bob = await connect('bob');
      await addMember('alice', 'team');
      expect(await rosterItems(alice)).to.deep.equal([]);

      const atAlice = nextPush(alice, 'bob@localhost');
      const atBob = nextPush(bob, 'alice@localhost');
      const bobPresence = nextPresence(alice, 'bob@localhost/desk');
      const alicePresence = nextPresence(bob, 'alice@localhost/desk');
      await addMember('bob', 'team');
      expect(await atAlice).to.deep.equal({ jid: 'bob@localhost', subscription: 'both', groups: ['Team'] });
      expect(await atBob).to.deep.equal({ jid: 'alice@localhost', subscription: 'both', groups: ['Team'] });
      await bobPresence;
      await alicePresence;
      expect(await rosterItems(alice)).to.deep.equal([{ jid: 'bob@localhost', subscription: 'both', groups: ['Team'] }]);
      expect(await ok('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(['alice@localhost', 'bob@localhost']);

      // Presence flows as between subscribed contacts: a status change reaches the other member.
      const away = nextPresence(alice, 'bob@localhost/desk');
      await bob.send(xml('presence', {}, xml('show', {}, 'away')));
      expect((await away).getChildText('show')).to.equal('away');

      const removed = nextPush(alice, 'bob@localhost');
      const gone = nextPresence(alice, 'bob@localhost/desk', 'unavailable');
      const bobSide = nextPush(bob, 'alice@localhost');
      expect(await ok('srg_user_del', { user: 'bob', host: 'localhost', group: 'team', grouphost: 'localhost' })).to.equal(0);
      expect(await removed).to.deep.equal({ jid: 'bob@localhost', subscription: 'remove' });
      await gone;
      expect(await bobSide).to.deep.equal({ jid: 'alice@localhost', subscription: 'remove' });
      expect(await rosterItems(alice)).to.deep.equal([]);
    });

    it('gives a member that logs in the presence of the others (probes), and them its own', async () => {
      await create('team', ['team'], 'Team');
      await addMember('alice', 'team');
      await addMember('bob', 'team');
      const alice = await connect('alice', { resource: 'phone' });
      const bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'laptop' });
      clients.push(bob);
      expect((await rosterGet(bob)).getChild('query', NS_ROSTER)!.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['alice@localhost']);
      const probed = nextPresence(bob, 'alice@localhost/phone');
      const broadcast = nextPresence(alice, 'bob@localhost/laptop');
      await bob.send(xml('presence', {}, xml('status', {}, 'here')));
      await probed;
      expect((await broadcast).getChildText('status')).to.equal('here');
    });

    it('shows the members of displayed groups in their label, and follows display and label changes', async () => {
      // staff sees clients; clients see nobody.
      await create('clients', [], 'Clients');
      await create('staff', ['clients'], 'Staff');
      await addMember('alice', 'staff');
      await addMember('carol', 'clients');
      const alice = await connect('alice');
      const carol = await connect('carol');
      expect(await rosterItems(alice)).to.deep.equal([{ jid: 'carol@localhost', subscription: 'both', groups: ['Clients'] }]);
      expect(await rosterItems(carol)).to.deep.equal([]);

      const shown = nextPush(carol, 'alice@localhost');
      expect(await ok('srg_add_displayed', { group: 'clients', host: 'localhost', add: 'staff' })).to.equal(0);
      expect(await shown).to.deep.equal({ jid: 'alice@localhost', subscription: 'both', groups: ['Staff'] });

      const renamed = nextPush(alice, 'carol@localhost');
      expect(await ok('srg_set_info', { group: 'clients', host: 'localhost', key: 'label', value: 'Customers' })).to.equal(0);
      expect(await renamed).to.deep.equal({ jid: 'carol@localhost', subscription: 'both', groups: ['Customers'] });

      // An empty label shows the identifier.
      const unnamed = nextPush(alice, 'carol@localhost');
      expect(await ok('srg_set_info', { group: 'clients', host: 'localhost', key: 'label', value: '' })).to.equal(0);
      expect(await unnamed).to.deep.equal({ jid: 'carol@localhost', subscription: 'both', groups: ['clients'] });

      const hidden = nextPush(alice, 'carol@localhost');
      expect(await ok('srg_del_displayed', { group: 'staff', host: 'localhost', del: 'clients' })).to.equal(0);
      expect(await hidden).to.deep.equal({ jid: 'carol@localhost', subscription: 'remove' });
      expect(await rosterItems(alice)).to.deep.equal([]);

      const deleted = nextPush(carol, 'alice@localhost');
      expect(await ok('srg_delete', { group: 'staff', host: 'localhost' })).to.equal(0);
      groups.splice(groups.findIndex((g) => g.group === 'staff'), 1);
      expect(await deleted).to.deep.equal({ jid: 'alice@localhost', subscription: 'remove' });
      expect(await rosterItems(carol)).to.deep.equal([]);
    });

    it('joins the labels of every group that shows the same contact', async () => {
      await create('b', [], 'Beta');
      await create('a', ['a', 'b'], 'Alpha');
      await addMember('alice', 'a');
      await addMember('bob', 'a');
      await addMember('bob', 'b');
      const alice = await connect('alice');
      expect(await rosterItems(alice)).to.deep.equal([{ jid: 'bob@localhost', subscription: 'both', groups: ['Alpha', 'Beta'] }]);
    });

    it('shows a group of another vhost, named group@vhost, and members of other vhosts', async () => {
      await create('partners', [], 'Partners', 'example.com');
      await create('team', ['team', 'partners@example.com'], 'Team');
      expect(await ok('srg_get_displayed', { group: 'team', host: 'localhost' })).to.deep.equal(['team', 'partners@example.com']);
      await addMember('alice', 'team');
      await addMember('erin', 'partners', 'example.com', 'example.com');
      // bob of localhost is a member of a group of example.com too.
      await addMember('bob', 'partners', 'localhost', 'example.com');
      expect(await ok('srg_get_members', { group: 'partners', host: 'example.com' })).to.deep.equal(['bob@localhost', 'erin@example.com']);
      const alice = await connect('alice');
      expect(await rosterItems(alice)).to.deep.equal([
        { jid: 'bob@localhost', subscription: 'both', groups: ['Partners'] },
        { jid: 'erin@example.com', subscription: 'both', groups: ['Partners'] },
      ]);
      const erin = await connect('erin', { host: 'example.com' });
      const shown = nextPush(erin, 'alice@localhost');
      expect(await ok('srg_add_displayed', { group: 'partners', host: 'example.com', add: 'team@localhost' })).to.equal(0);
      expect(await shown).to.deep.equal({ jid: 'alice@localhost', subscription: 'both', groups: ['Team'] });
    });

    it('@all@: every account of the group\'s host, also those registered or removed later', async () => {
      await create('everyone', ['everyone'], 'Everyone');
      const alice = await connect('alice');
      const all = [] as string[];
      const pushes = collect(alice);
      expect(await ok('srg_user_add', { user: '@all@', host: 'localhost', group: 'everyone', grouphost: 'localhost' })).to.equal(0);
      expect((await ok('srg_get_info', { group: 'everyone', host: 'localhost' }))[3]).to.deep.equal({ key: 'all_users', value: 'true' });
      expect(await ok('srg_get_members', { group: 'everyone', host: 'localhost' })).to.deep.equal([]);
      const users = (await ok('registered_users', { host: 'localhost' })) as string[];
      for (const user of users) if (user !== 'alice') all.push(`${user}@localhost`);
      expect((await rosterItems(alice)).map((i) => [i.jid, i.subscription, i.groups])).to.deep.equal(all.map((jid) => [jid, 'both', ['Everyone']]));
      await pause(200);
      expect(pushes.filter((s) => isPush(s)).map((s) => pushedItem(s).jid).sort()).to.deep.equal(all);

      const joined = nextPush(alice, 'newbie@localhost');
      await t.register('newbie', 'localhost', 'newbie-pw');
      expect(await joined).to.deep.equal({ jid: 'newbie@localhost', subscription: 'both', groups: ['Everyone'] });
      const left = nextPush(alice, 'newbie@localhost');
      expect(await ok('unregister', { user: 'newbie', host: 'localhost' })).to.equal('User newbie@localhost unregistered');
      expect(await left).to.deep.equal({ jid: 'newbie@localhost', subscription: 'remove' });

      // erin is of example.com: not one of localhost's @all@.
      expect((await rosterItems(alice)).map((i) => i.jid)).to.not.include('erin@example.com');
      const cleared = nextPush(alice, 'bob@localhost');
      expect(await ok('srg_user_del', { user: '@all@', host: 'localhost', group: 'everyone', grouphost: 'localhost' })).to.equal(0);
      expect(await cleared).to.deep.equal({ jid: 'bob@localhost', subscription: 'remove' });
      expect(await rosterItems(alice)).to.deep.equal([]);
    });

    it('@online@: the accounts with an available session, coming and going', async () => {
      await create('online', ['online'], 'Online');
      expect(await ok('srg_user_add', { user: '@online@', host: 'localhost', group: 'online', grouphost: 'localhost' })).to.equal(0);
      expect((await ok('srg_get_info', { group: 'online', host: 'localhost' }))[4]).to.deep.equal({ key: 'online_users', value: 'true' });
      const alice = await connect('alice');
      expect(await rosterItems(alice)).to.deep.equal([]);

      // bob's roster shows alice before bob is available; alice sees bob once he is.
      const bob = await connect('bob', { available: false });
      expect(await rosterItems(bob)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'both', groups: ['Online'] }]);
      const arrived = nextPush(alice, 'bob@localhost');
      const bobPresence = nextPresence(alice, 'bob@localhost/desk');
      const probed = nextPresence(bob, 'alice@localhost/desk');
      await bob.send(xml('presence'));
      expect(await arrived).to.deep.equal({ jid: 'bob@localhost', subscription: 'both', groups: ['Online'] });
      await bobPresence;
      await probed;

      const unavailable = nextPresence(alice, 'bob@localhost/desk', 'unavailable');
      const departed = nextPush(alice, 'bob@localhost');
      await bob.send(xml('presence', { type: 'unavailable' }));
      await unavailable;
      expect(await departed).to.deep.equal({ jid: 'bob@localhost', subscription: 'remove' });

      // Ending the session counts as going offline too.
      const back = nextPush(alice, 'bob@localhost');
      await bob.send(xml('presence'));
      await back;
      const ended = nextPush(alice, 'bob@localhost');
      await stopAll(bob);
      expect(await ended).to.deep.equal({ jid: 'bob@localhost', subscription: 'remove' });
    });
  });

  describe('rosters as clients keep them', () => {
    it('changes the roster version with the groups, also while the client is offline', async () => {
      const first = await login(t, { user: 'dave', password: 'dave-pw' });
      const v1 = (await rosterGet(first, '')).getChild('query', NS_ROSTER)!.attrs.ver!;
      await stopAll(first);

      await create('pair', ['pair'], 'Pair');
      await addMember('dave', 'pair');
      await addMember('frank', 'pair');
      const dave = await login(t, { user: 'dave', password: 'dave-pw' });
      clients.push(dave);
      const full = (await rosterGet(dave, v1)).getChild('query', NS_ROSTER)!;
      const v2 = full.attrs.ver!;
      expect(v2).to.not.equal(v1);
      expect(full.getChildren('item').map((i) => i.attrs.jid)).to.deep.equal(['frank@localhost']);
      expect((await rosterGet(dave, v2)).getChildElements()).to.have.length(0);

      // A push carries the version a roster get then reports as current.
      const push = new Promise<string>((resolve) => dave.on('stanza', (s) => isPush(s, 'frank@localhost') && resolve(s.getChild('query', NS_ROSTER)!.attrs.ver!)));
      expect(await ok('srg_set_info', { group: 'pair', host: 'localhost', key: 'label', value: 'Duo' })).to.equal(0);
      const v3 = await push;
      expect(v3).to.not.equal(v2);
      expect((await rosterGet(dave, v3)).getChildElements()).to.have.length(0);
      expect((await rosterGet(dave, v2)).getChild('query', NS_ROSTER)!.attrs.ver).to.equal(v3);
    });

    it('keeps a shared contact the owner tries to remove, and lets it name it and group it', async () => {
      await create('team', ['team'], 'Team');
      await addMember('alice', 'team');
      await addMember('bob', 'team');
      const alice = await connect('alice');
      await expectIqError(rosterSet(alice, xml('item', { jid: 'bob@localhost', subscription: 'remove' })), 'not-allowed');

      const named = nextPush(alice, 'bob@localhost');
      await rosterSet(alice, xml('item', { jid: 'bob@localhost', name: 'Bobby' }, xml('group', {}, 'Friends')));
      expect(await named).to.deep.equal({ jid: 'bob@localhost', subscription: 'both', name: 'Bobby', groups: ['Friends', 'Team'] });

      // Out of the group, bob stays as the owner's own contact, without a subscription.
      const personal = nextPush(alice, 'bob@localhost');
      expect(await ok('srg_user_del', { user: 'bob', host: 'localhost', group: 'team', grouphost: 'localhost' })).to.equal(0);
      expect(await personal).to.deep.equal({ jid: 'bob@localhost', subscription: 'none', name: 'Bobby', groups: ['Friends'] });
      await rosterSet(alice, xml('item', { jid: 'bob@localhost', subscription: 'remove' }));
    });

    it('shows clients no subscription stanza between shared contacts', async () => {
      await create('team', ['team'], 'Team');
      await addMember('alice', 'team');
      await addMember('bob', 'team');
      const alice = await connect('alice');
      const bob = await connect('bob');
      const subscription = (s: Element) => s.is('presence') && ['subscribe', 'subscribed', 'unsubscribe', 'unsubscribed'].includes(s.attrs.type!);
      const atAlice = expectSilence(alice, subscription, 'a subscription stanza between shared contacts');
      const atBob = expectSilence(bob, subscription, 'a subscription stanza between shared contacts');
      for (const type of ['subscribe', 'unsubscribe', 'unsubscribed']) await bob.send(xml('presence', { type, to: 'alice@localhost' }));
      // Presence each then directs to the other arrives: bob's after his subscription stanzas were handled, alice's after that.
      const directed = (from: string) => (s: Element) => s.is('presence') && s.attrs.from === from && s.getChildText('status') === 'directed';
      await atAlice.proveWith(() => bob.send(xml('presence', { to: 'alice@localhost/desk' }, xml('status', {}, 'directed'))), directed('bob@localhost/desk'));
      await atBob.proveWith(() => alice.send(xml('presence', { to: 'bob@localhost/desk' }, xml('status', {}, 'directed'))), directed('alice@localhost/desk'));
      expect(await rosterItems(bob)).to.deep.equal([{ jid: 'alice@localhost', subscription: 'both', groups: ['Team'] }]);
    });

    it('holds back a stored subscription request from a contact while it is shared, and delivers it after', async () => {
      // gina asks frank while he is offline: the request is stored for his next login.
      const gina = await connect('gina');
      await gina.send(xml('presence', { type: 'subscribe', to: 'frank@localhost' }));
      // So does carol, who will share no group with him.
      const carol = await connect('carol');
      await carol.send(xml('presence', { type: 'subscribe', to: 'frank@localhost' }));
      await pause(200);
      await create('pair', ['pair'], 'Pair');
      await addMember('frank', 'pair');
      await addMember('gina', 'pair');
      const shared = await login(t, { user: 'frank', password: 'frank-pw' });
      clients.push(shared);
      const fromContact = (contact: string) => (s: Element) => s.is('presence') && s.attrs.type === 'subscribe' && s.attrs.from === contact;
      const whileShared = expectSilence(shared, fromContact('gina@localhost'), 'the stored request of a contact shared both ways');
      await rosterGet(shared, '');
      // Stored requests are all sent as the initial presence is handled: before the answer to the roster get after it.
      await whileShared.proveWith(async () => {
        await shared.send(xml('presence'));
        await rosterGet(shared);
      }, fromContact('carol@localhost'));
      await shared.send(xml('presence', { type: 'unsubscribed', to: 'carol@localhost' }));
      await rosterSet(carol, xml('item', { jid: 'frank@localhost', subscription: 'remove' }));
      await stopAll(shared);

      expect(await ok('srg_delete', { group: 'pair', host: 'localhost' })).to.equal(0);
      const after = await login(t, { user: 'frank', password: 'frank-pw' });
      clients.push(after);
      const request = nextPresence(after, 'gina@localhost', 'subscribe');
      await after.send(xml('presence'));
      await request;
      await after.send(xml('presence', { type: 'unsubscribed', to: 'gina@localhost' }));
      await rosterSet(gina, xml('item', { jid: 'frank@localhost', subscription: 'remove' }));
    });

    it('removes an account from its groups and from the rosters that showed it', async () => {
      await t.register('temp', 'localhost', 'temp-pw');
      await create('team', ['team'], 'Team');
      await addMember('alice', 'team');
      await addMember('temp', 'team');
      const alice = await connect('alice');
      expect((await rosterItems(alice)).map((i) => i.jid)).to.deep.equal(['temp@localhost']);
      const removed = nextPush(alice, 'temp@localhost');
      await ok('unregister', { user: 'temp', host: 'localhost' });
      expect(await removed).to.deep.equal({ jid: 'temp@localhost', subscription: 'remove' });
      expect(await ok('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(['alice@localhost']);
      // Registered again, it is a new account: not a member.
      await t.register('temp', 'localhost', 'temp-pw');
      expect(await ok('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(['alice@localhost']);
      await ok('unregister', { user: 'temp', host: 'localhost' });
    });
  });

  describe('servicectl and XML-RPC', () => {
    const ctl = (...args: string[]) => servicectl(t.configFile, ...args);

    it('servicectl takes the displayed groups as the remaining words, prints lists one per line, and fails with the reason', async () => {
      groups.push({ group: 'cli', host: 'localhost' });
      expect(await ctl('srg_create', 'cli', 'localhost', 'CLI team', 'made with servicectl', 'cli')).to.deep.include({ code: 0, stdout: '' });
      expect(await ctl('srg_user_add', 'alice', 'localhost', 'cli', 'localhost')).to.deep.include({ code: 0, stdout: '' });
      expect(await ctl('srg_user_add', 'bob', 'localhost', 'cli', 'localhost')).to.deep.include({ code: 0, stdout: '' });
      expect((await ctl('srg_get_members', 'cli', 'localhost')).stdout).to.equal('alice@localhost\nbob@localhost\n');
      expect((await ctl('srg_get_displayed', 'cli', 'localhost')).stdout).to.equal('cli\n');
      const info = await ctl('--json', 'srg_get_info', 'cli', 'localhost');
      expect(JSON.parse(info.stdout)[0]).to.deep.equal({ key: 'label', value: 'CLI team' });
      const alice = await connect('alice');
      expect(await rosterItems(alice)).to.deep.equal([{ jid: 'bob@localhost', subscription: 'both', groups: ['CLI team'] }]);

      const missing = await ctl('srg_get_members', 'ghost', 'localhost');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain("shared roster group 'ghost' does not exist on localhost");
    });

    it('XML-RPC takes and gives lists as ejabberd encodes them, and faults for a missing group', async () => {
      groups.push({ group: 'rpc', host: 'localhost' });
      const created = await xmlrpcAsAdmin(t, 'srg_create', { group: 'rpc', host: 'localhost', label: 'RPC', description: 'over XML-RPC', display: [{ group: 'rpc' }] });
      expect(created.result).to.deep.equal({ res: 0 });
      expect((await xmlrpcAsAdmin(t, 'srg_user_add', { user: 'carol', host: 'localhost', group: 'rpc', grouphost: 'localhost' })).result).to.deep.equal({ res: 0 });
      expect((await xmlrpcAsAdmin(t, 'srg_list', { host: 'localhost' })).result).to.deep.equal({ groups: [{ id: 'rpc' }] });
      expect((await xmlrpcAsAdmin(t, 'srg_get_members', { group: 'rpc', host: 'localhost' })).result).to.deep.equal({ members: [{ member: 'carol@localhost' }] });
      expect((await xmlrpcAsAdmin(t, 'srg_get_info', { group: 'rpc', host: 'localhost' })).result.informations[1]).to.deep.equal({ key: 'description', value: 'over XML-RPC' });
      const fault = (await xmlrpcAsAdmin(t, 'srg_get_displayed', { group: 'ghost', host: 'localhost' })).fault;
      expect(fault).to.deep.equal({ faultCode: 45, faultString: "shared roster group 'ghost' does not exist on localhost" });
    });
  });
});

describe('mod_admin_extra shared roster commands without mod_shared_roster', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(config({ mod_admin_extra: {} }));
    await t.bootstrapAdmin();
  });
  after(() => t.stop());

  it('fail with 422 saying which module to enable', async () => {
    const res = await t.api('srg_list', { host: 'localhost' }, { basic: ADMIN });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.equal('srg_list needs mod_shared_roster, which is not enabled: add it to modules');
    const create = await t.api('srg_create', { group: 'g', host: 'localhost', label: '', description: '', display: [] }, { basic: ADMIN });
    expect(create.body.message).to.equal('srg_create needs mod_shared_roster, which is not enabled: add it to modules');
  });
});
