/**
 * mod_muc_admin's argument rules: bad input (unknown option, bad value, a JID that is not a room's, an
 * unknown service, a room that does not exist, a bad room file) is a clear 4xx naming the problem, with
 * nothing changed; the API versions (create_room_with_opts' separators before 25.03, the v3 renames, the
 * list of invitees); subscribe_room_many's limit (50 by default, the module option); `global`; and a
 * sample over XML-RPC and servicectl.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join as joinPath } from 'node:path';
import { servicectl } from '../support/cli.js';
import type { TestServer } from '../support/server.js';
import { next, stopAll, type Client } from '../support/xmpp.js';
import { xmlrpcAsAdmin } from '../support/xmlrpc.js';
import { connect, join, mucConfig, ok, refused, SERVICE, startMucServer } from './support.js';

const OTHER_SERVICE = 'conference.example.com';

describe('mod_muc_admin argument rules', () => {
  let t: TestServer;
  let alice: Client;

  before(async () => {
    t = await startMucServer(mucConfig());
    alice = await connect(t, 'alice');
    expect(await ok(t, 'create_room', { room: 'base', service: SERVICE, host: 'localhost' })).to.equal(0);
    await join(alice, 'base', 'Alice');
  });
  after(async () => {
    await stopAll(alice);
    await t?.stop();
  });

  describe('bad input is a clear 4xx and changes nothing', () => {
    it('an unknown service, a room name that is not one, a room that does not exist', async () => {
      await refused(
        t,
        'create_room',
        { room: 'x', service: 'muc.nowhere.org', host: 'localhost' },
        400,
        /^argument 'service': 'muc\.nowhere\.org' is not a MUC service of this server \(it runs conference\.localhost, conference\.example\.com\)$/,
      );
      await refused(t, 'create_room', { room: 'a b', service: SERVICE, host: 'localhost' }, 400, /^room: 'a b' is not a valid room name/);
      await refused(t, 'create_room', { room: 'x', service: SERVICE, host: 'elsewhere.org' }, 400, /^argument 'host': unknown virtual host 'elsewhere\.org'/);
      await refused(t, 'create_room', { room: 'base', service: SERVICE, host: 'localhost' }, 409, /base/);
      for (const command of ['destroy_room', 'get_room_options', 'get_room_occupants', 'get_room_occupants_number', 'get_room_history', 'get_subscribers', 'get_room_affiliations']) {
        await refused(t, command, { room: 'ghost', service: SERVICE }, 404, /^room ghost@conference\.localhost does not exist$/);
        await refused(t, command, { room: 'ghost', service: 'localhost' }, 400, /^argument 'service': 'localhost' is not a MUC service/);
      }
      expect(await ok(t, 'muc_online_rooms', { service: 'global' })).to.deep.equal([`base@${SERVICE}`]);
    });

    it('change_room_option: an unknown option (with a did-you-mean) or a bad value, and the option is unchanged', async () => {
      await refused(
        t,
        'change_room_option',
        { room: 'base', service: SERVICE, option: 'members_olny', value: 'true' },
        400,
        /^argument 'option': unknown room option 'members_olny' \(did you mean 'members_only'\?\)/,
      );
      const before = await ok(t, 'get_room_options', { room: 'base', service: SERVICE });
      await refused(t, 'change_room_option', { room: 'base', service: SERVICE, option: 'members_only', value: 'maybe' }, 400, /value|maybe/);
      await refused(t, 'change_room_option', { room: 'base', service: SERVICE, option: 'max_users', value: 'lots' }, 400, /value|lots/);
      expect(await ok(t, 'get_room_options', { room: 'base', service: SERVICE })).to.deep.equal(before);
    });

    it('create_room_with_opts checks every option first: nothing is created on a bad one', async () => {
      const cases: Array<[Array<{ name: string; value: string }>, RegExp]> = [
        [[{ name: 'colour', value: 'blue' }], /^argument 'options': unknown room option 'colour'/],
        [[{ name: 'members_only', value: 'yes' }], /^argument 'options': option members_only takes true or false, got 'yes'$/],
        [[{ name: 'affiliations', value: 'king=alice@localhost' }], /^argument 'options': option affiliations: 'king=alice@localhost' is not Type=JID/],
        [[{ name: 'subscribers', value: 'carol@localhost=Caro=gossip' }], /^argument 'options': 'gossip' is not a MUC\/Sub node/],
        [
          [
            { name: 'title', value: 'a' },
            { name: 'title', value: 'b' },
          ],
          /^argument 'options': option title is given twice$/,
        ],
      ];
      for (const [options, message] of cases) await refused(t, 'create_room_with_opts', { room: 'never', service: SERVICE, host: 'localhost', options }, 400, message);
      expect(await ok(t, 'muc_online_rooms', { service: SERVICE })).to.deep.equal([`base@${SERVICE}`]);
    });

    it('set_room_affiliation, subscribe_room, muc_register_nick and the JIDs they take', async () => {
      await refused(
        t,
        'set_room_affiliation',
        { room: 'base', service: SERVICE, user: 'bob', host: 'localhost', affiliation: 'king' },
        400,
        /^affiliation must be one of owner, admin, member, outcast, none, got 'king'$/,
      );
      await refused(t, 'set_room_affiliation', { room: 'base', service: SERVICE, user: 'b@b', host: 'localhost', affiliation: 'member' }, 400, /^user: 'b@b' is not a valid user name/);
      await refused(t, 'get_room_affiliation', { room: 'base', service: SERVICE, jid: '@@' }, 400, /^jid: '@@' is not a valid JID/);
      await refused(
        t,
        'subscribe_room',
        { user: 'bob', host: 'localhost', nick: 'B', room: 'base', service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:gossip'] },
        400,
        /^argument 'nodes': 'urn:xmpp:mucsub:nodes:gossip' is not a MUC\/Sub node/,
      );
      await refused(t, 'subscribe_room', { user: 'bob', host: 'localhost', nick: 'B', room: 'base', service: SERVICE, nodes: [] }, 400, /^nodes must name at least one MUC\/Sub node, got none$/);
      await refused(t, 'muc_register_nick', { nick: 'N', user: 'bob', host: 'localhost', service: 'nowhere.org' }, 400, /is not a MUC service of this server/);
      await refused(t, 'muc_unregister_nick', { user: 'bob', host: 'localhost', service: SERVICE }, 404, /./);
      expect(await ok(t, 'get_room_affiliations', { room: 'base', service: SERVICE })).to.deep.equal([]);
      expect(await ok(t, 'get_subscribers', { room: 'base', service: SERVICE })).to.deep.equal([]);
    });

    it('listing: `global` or a MUC service, a valid regex, days not negative', async () => {
      await refused(t, 'muc_online_rooms', { service: 'everything' }, 400, /^argument 'service': 'everything' is not a MUC service of this server/);
      await refused(t, 'rooms_empty_list', { service: 'localhost' }, 400, /is not a MUC service/);
      await refused(t, 'muc_online_rooms_by_regex', { service: 'global', regex: '(' }, 400, /^regex: '\(' is not a valid regular expression/);
      await refused(t, 'rooms_unused_list', { service: 'global', days: -1 }, 400, /^days must be 0 or more, got -1$/);
    });

    it('room files: a missing file, and a bad line is named with its number, creating nothing', async () => {
      await refused(t, 'create_rooms_file', { file: joinPath(t.dir, 'none.txt') }, 404, /does not exist$/);
      const bad = joinPath(t.dir, 'bad-rooms.txt');
      await writeFile(bad, `one@${SERVICE}\nnot a room\nthree@${SERVICE}\n`);
      await refused(t, 'create_rooms_file', { file: bad }, 400, /bad-rooms\.txt line 2: not a valid JID: each line must be the JID of a room \(room@service\)$/);
      const secret = joinPath(t.dir, 'secret.txt');
      await writeFile(secret, 'root:s3cret:/bin/sh\n');
      const res = await t.api('create_rooms_file', { file: secret }, { basic: 'admin@localhost:adminpass' });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.not.match(/root|s3cret|bin/);
      const twice = joinPath(t.dir, 'twice-rooms.txt');
      await writeFile(twice, `one@${SERVICE}\r\n# comment\r\nONE@${SERVICE}\r\n`);
      await refused(t, 'create_rooms_file', { file: twice }, 400, /twice-rooms\.txt line 3: one@conference\.localhost is listed already on line 1$/);
      const foreign = joinPath(t.dir, 'foreign-rooms.txt');
      await writeFile(foreign, `one@${SERVICE}\ntwo@muc.nowhere.org\n`);
      await refused(t, 'create_rooms_file', { file: foreign }, 400, /foreign-rooms\.txt line 2: the JID's service is not a MUC service of this server \(it runs conference\.localhost, conference\.example\.com\)$/);
      const existing = joinPath(t.dir, 'existing-rooms.txt');
      await writeFile(existing, `one@${SERVICE}\nbase@${SERVICE}\n`);
      await refused(t, 'create_rooms_file', { file: existing }, 409, /existing-rooms\.txt line 2: room base@conference\.localhost exists already$/);
      await refused(t, 'destroy_rooms_file', { file: existing }, 404, /existing-rooms\.txt line 1: room one@conference\.localhost does not exist$/);
      expect(await ok(t, 'muc_online_rooms', { service: 'global' })).to.deep.equal([`base@${SERVICE}`]);
    });
  });

  describe('API versions', () => {
    it('create_room_with_opts takes `,` and `:` up to API version 3, `;` and `=` since version 4 (25.03)', async () => {
      const old = [
        { name: 'affiliations', value: 'owner:alice@localhost,member:bob@localhost' },
        { name: 'allow_subscription', value: 'true' },
        { name: 'subscribers', value: 'carol@localhost:Caro:urn:xmpp:mucsub:nodes:messages:subject,dave@localhost:Dave:messages' },
      ];
      expect(await ok(t, 'create_room_with_opts', { room: 'old', service: SERVICE, host: 'localhost', options: old }, '/api/v3')).to.equal(0);
      expect(await ok(t, 'get_room_affiliations', { room: 'old', service: SERVICE })).to.have.deep.members([
        { jid: 'alice@localhost', affiliation: 'owner', reason: '' },
        { jid: 'bob@localhost', affiliation: 'member', reason: '' },
      ]);
      expect(await ok(t, 'get_subscribers', { room: 'old', service: SERVICE })).to.have.members(['carol@localhost', 'dave@localhost']);
      const carol = (await ok(t, 'get_user_subscriptions', { user: 'carol', host: 'localhost' })).find((s: any) => s.roomjid === `old@${SERVICE}`);
      expect(carol.nodes).to.have.members(['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:subject']);
      // The old form at the current version is a bad value, and the new form at the old version too.
      await refused(t, 'create_room_with_opts', { room: 'mixed', service: SERVICE, host: 'localhost', options: [old[0]] }, 400, /is not Type=JID/);
      await refused(
        t,
        'create_room_with_opts',
        { room: 'mixed', service: SERVICE, host: 'localhost', options: [{ name: 'affiliations', value: 'owner=alice@localhost' }] },
        400,
        /is not Type:JID/,
        '/api/v3',
      );
      expect(await ok(t, 'destroy_room', { room: 'old', service: SERVICE })).to.equal(0);
    });

    it('version 0 forms: set_room_affiliation with name and jid, get_room_affiliations with username and domain, muc_register_nick with jid', async () => {
      expect(await ok(t, 'set_room_affiliation', { name: 'base', service: SERVICE, jid: 'bob@localhost', affiliation: 'member' }, '/api/v0')).to.equal(0);
      expect(await ok(t, 'get_room_affiliations', { room: 'base', service: SERVICE }, '/api/v0')).to.deep.equal([{ username: 'bob', domain: 'localhost', affiliation: 'member', reason: '' }]);
      expect(await ok(t, 'set_room_affiliation', { room: 'base', service: SERVICE, user: 'bob', host: 'localhost', affiliation: 'none' })).to.equal(0);
      expect(await ok(t, 'muc_register_nick', { nick: 'Bobby', jid: 'bob@localhost', service: SERVICE }, '/api/v0')).to.equal(0);
      expect(await ok(t, 'muc_unregister_nick', { jid: 'bob@localhost', service: SERVICE }, '/api/v0')).to.equal(0);
      expect(await ok(t, 'rooms_empty_destroy', { service: OTHER_SERVICE }, '/api/v0')).to.deep.equal([]);
    });

    it('send_direct_invitation: users as a list, or (version 0) as one text separated by `:`', async () => {
      const bob = await connect(t, 'bob');
      try {
        const first = next(bob, (s) => s.is('message') && s.getChild('x', 'jabber:x:conference')?.attrs.reason === 'list form', 10_000);
        expect(await ok(t, 'send_direct_invitation', { room: 'base', service: SERVICE, password: 'none', reason: 'list form', users: ['bob@localhost'] })).to.equal(0);
        await first;
        const second = next(bob, (s) => s.is('message') && s.getChild('x', 'jabber:x:conference')?.attrs.reason === 'text form', 10_000);
        expect(await ok(t, 'send_direct_invitation', { name: 'base', service: SERVICE, password: 'secret', reason: 'text form', users: 'bob@localhost:carol@localhost' }, '/api/v0')).to.equal(0);
        expect((await second).getChild('x', 'jabber:x:conference')!.attrs.password).to.equal('secret');
        await refused(t, 'send_direct_invitation', { room: 'base', service: SERVICE, password: 'none', reason: 'none', users: ['not a jid@'] }, 400, /^users: 'not a jid@' is not a valid JID/);
        await refused(t, 'send_direct_invitation', { room: 'base', service: SERVICE, password: 'none', reason: 'none', users: [] }, 400, /at least one JID/);
      } finally {
        await stopAll(bob);
      }
    });
  });

  describe('older argument forms', () => {
    it('the room argument may still be called `name` (before 24.02)', async () => {
      expect(await ok(t, 'create_room', { name: 'renamed', service: SERVICE, host: 'localhost' })).to.equal(0);
      expect(await ok(t, 'get_room_occupants_number', { name: 'renamed', service: SERVICE })).to.equal(0);
      expect(await ok(t, 'destroy_room', { name: 'renamed', service: SERVICE })).to.equal(0);
    });

    it('version 0 subscribe_room and unsubscribe_room take room JIDs and refuse a JID that is not a room', async () => {
      expect(await ok(t, 'change_room_option', { room: 'base', service: SERVICE, option: 'allow_subscription', value: 'true' })).to.equal(0);
      const nodes = 'urn:xmpp:mucsub:nodes:messages,subject';
      expect(await ok(t, 'subscribe_room', { user: 'carol@localhost/phone', nick: 'Caro', room: `base@${SERVICE}`, nodes }, '/api/v0')).to.have.members([
        'urn:xmpp:mucsub:nodes:messages',
        'urn:xmpp:mucsub:nodes:subject',
      ]);
      expect(await ok(t, 'get_subscribers', { room: 'base', service: SERVICE })).to.deep.equal(['carol@localhost']);
      await refused(t, 'unsubscribe_room', { user: 'carol@localhost', room: SERVICE }, 400, /^argument 'room': 'conference\.localhost' is not a room JID/, '/api/v0');
      await refused(t, 'unsubscribe_room', { user: 'carol@localhost', room: 'base@localhost' }, 400, /'localhost' is not a MUC service of this server/, '/api/v0');
      expect(await ok(t, 'unsubscribe_room', { user: 'carol@localhost', room: `base@${SERVICE}` }, '/api/v0')).to.equal(0);
      expect(await ok(t, 'get_subscribers', { room: 'base', service: SERVICE })).to.deep.equal([]);
      await refused(t, 'unsubscribe_room', { user: 'carol', host: 'localhost', room: 'base', service: SERVICE }, 404, /./);
    });
  });

  describe('subscribe_room_many limit', () => {
    it('takes 50 users; 51 is refused naming the limit, and nobody is subscribed', async () => {
      expect(await ok(t, 'change_room_option', { room: 'base', service: SERVICE, option: 'allow_subscription', value: 'true' })).to.equal(0);
      const users = (n: number) => Array.from({ length: n }, (_, i) => ({ user: `user${i}`, host: 'localhost', nick: `Nick ${i}` }));
      const nodes = ['urn:xmpp:mucsub:nodes:messages'];
      await refused(
        t,
        'subscribe_room_many',
        { users: users(51), room: 'base', service: SERVICE, nodes },
        400,
        /^argument 'users': subscribe_room_many takes at most 50 users per call \(subscribe_room_many_max_users\), got 51$/,
      );
      expect(await ok(t, 'get_subscribers', { room: 'base', service: SERVICE })).to.deep.equal([]);
      expect(await ok(t, 'subscribe_room_many', { users: users(50), room: 'base', service: SERVICE, nodes })).to.equal(0);
      expect(await ok(t, 'get_subscribers', { room: 'base', service: SERVICE })).to.have.length(50);
    });
  });

  describe('global', () => {
    it('muc_online_rooms and rooms_empty_list cover every MUC service with `global`', async () => {
      expect(await ok(t, 'create_room', { room: 'far', service: OTHER_SERVICE, host: 'example.com' })).to.equal(0);
      expect(await ok(t, 'muc_online_rooms', { service: OTHER_SERVICE })).to.deep.equal([`far@${OTHER_SERVICE}`]);
      expect(await ok(t, 'muc_online_rooms', { service: 'global' })).to.have.members([`base@${SERVICE}`, `far@${OTHER_SERVICE}`]);
      expect(await ok(t, 'rooms_empty_list', { service: 'global' })).to.include(`far@${OTHER_SERVICE}`);
      expect(await ok(t, 'muc_online_rooms_by_regex', { service: 'global', regex: 'a' })).to.have.deep.members([
        { jid: `base@${SERVICE}`, public: 'true', participants: 1 },
        { jid: `far@${OTHER_SERVICE}`, public: 'true', participants: 0 },
      ]);
      expect(await ok(t, 'destroy_room', { room: 'far', service: OTHER_SERVICE })).to.equal(0);
    });
  });

  describe('XML-RPC and servicectl', () => {
    it('XML-RPC: results as ejabberd encodes them, and faults with the error table codes', async () => {
      expect((await xmlrpcAsAdmin(t, 'get_room_occupants_number', { room: 'base', service: SERVICE })).result).to.deep.equal({ occupants: 1 });
      expect((await xmlrpcAsAdmin(t, 'muc_online_rooms', { service: SERVICE })).result).to.deep.equal({ rooms: [{ room: `base@${SERVICE}` }] });
      expect((await xmlrpcAsAdmin(t, 'get_room_options', { room: 'ghost', service: SERVICE })).fault).to.deep.equal({ faultCode: 45, faultString: `room ghost@${SERVICE} does not exist` });
      const bob = await connect(t, 'bob', 'rpc');
      try {
        const invited = next(bob, (s) => s.is('message') && s.getChild('x', 'jabber:x:conference')?.attrs.reason === 'over XML-RPC', 10_000);
        const sent = await xmlrpcAsAdmin(t, 'send_direct_invitation', { room: 'base', service: SERVICE, password: 'none', reason: 'over XML-RPC', users: [{ jid: 'bob@localhost' }] });
        expect(sent.result).to.deep.equal({ res: 0 });
        await invited;
      } finally {
        await stopAll(bob);
      }
    });

    it('servicectl: create_room, get_room_occupants, and an error on stderr', async () => {
      const created = await servicectl(t.configFile, 'create_room', 'shell', SERVICE, 'localhost');
      expect(created, created.stderr).to.deep.include({ code: 0 });
      expect((await servicectl(t.configFile, 'muc_online_rooms', SERVICE)).stdout.split('\n')).to.include(`shell@${SERVICE}`);
      const missing = await servicectl(t.configFile, 'destroy_room', 'ghost', SERVICE);
      expect(missing.code).to.not.equal(0);
      expect(missing.stderr).to.contain(`room ghost@${SERVICE} does not exist`);
      expect((await servicectl(t.configFile, 'destroy_room', 'shell', SERVICE)).code).to.equal(0);
    });
  });
});

describe('mod_muc_admin subscribe_room_many_max_users', () => {
  let t: TestServer;
  before(async () => {
    t = await startMucServer(mucConfig({ mucAdmin: { subscribe_room_many_max_users: 2 } }));
  });
  after(() => t?.stop());

  it('is the limit of subscribe_room_many', async () => {
    expect(await ok(t, 'create_room_with_opts', { room: 'small', service: SERVICE, host: 'localhost', options: [{ name: 'allow_subscription', value: 'true' }] })).to.equal(0);
    const users = [1, 2, 3].map((i) => ({ user: `u${i}`, host: 'localhost', nick: `N${i}` }));
    await refused(t, 'subscribe_room_many', { users, room: 'small', service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:messages'] }, 400, /at most 2 users per call/);
    expect(await ok(t, 'subscribe_room_many', { users: users.slice(0, 2), room: 'small', service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:messages'] })).to.equal(0);
  });
});

describe('mod_muc_admin without mod_muc', () => {
  it('does not start, saying that mod_muc must be enabled', async () => {
    const raw = mucConfig();
    delete (raw.modules as Record<string, unknown>).mod_muc;
    const failure = await startMucServer(raw).then(
      async (t) => {
        await t.stop();
        return undefined;
      },
      (err: Error) => err,
    );
    expect(String(failure)).to.match(/mod_muc_admin: it uses the service mod_muc\.muc of mod_muc, which is not enabled: add mod_muc to modules/);
  });
});
