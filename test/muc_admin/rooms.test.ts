/**
 * mod_muc_admin's commands against rooms' live state, on each database: real clients join rooms with raw
 * XEP-0045 presence, talk, get banned, invited and told of option changes, and each command's answer is
 * checked against what those clients see. Rooms made from a file are there after a restart of the server.
 */
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { join as joinPath } from 'node:path';
import { testDatabases } from '../support/databases.js';
import type { TestServer } from '../support/server.js';
import { next, stopAll, type Client } from '../support/xmpp.js';
import { connect, eventually, hasStatus, join, leave, mucConfig, NS_MUC_USER, ok, restart, say, SERVICE, startMucServer } from './support.js';

const ROOM = 'lounge';
const LOUNGE = `${ROOM}@${SERVICE}`;

for (const database of testDatabases()) {
  describe(`mod_muc_admin rooms on ${database.name}`, () => {
    let t: TestServer;
    let alice: Client;
    let bob: Client;
    let carol: Client;

    before(async () => {
      t = await startMucServer(mucConfig({ sql: await database.settings('/tmp') }));
      alice = await connect(t, 'alice');
      bob = await connect(t, 'bob');
      carol = await connect(t, 'carol');
    });
    after(async () => {
      await stopAll(alice, bob, carol);
      await t?.stop();
      await database.cleanup();
    });

    it('create_room makes a room clients can join; muc_online_rooms lists it', async () => {
      expect(await ok(t, 'create_room', { room: ROOM, service: SERVICE, host: 'localhost' })).to.equal(0);
      expect(await ok(t, 'muc_online_rooms', { service: SERVICE })).to.include(LOUNGE);
      expect(await ok(t, 'get_room_occupants_number', { room: ROOM, service: SERVICE })).to.equal(0);
    });

    it('set_room_affiliation makes alice owner: she joins as a moderator; get_room_affiliation(s) show it', async () => {
      expect(await ok(t, 'set_room_affiliation', { room: ROOM, service: SERVICE, user: 'alice', host: 'localhost', affiliation: 'owner' })).to.equal(0);
      expect(await ok(t, 'get_room_affiliation', { room: ROOM, service: SERVICE, jid: 'alice@localhost' })).to.equal('owner');
      const self = await join(alice, ROOM, 'Alice');
      expect(self.getChild('x', NS_MUC_USER)!.getChild('item')!.attrs).to.deep.include({ affiliation: 'owner', role: 'moderator' });
      expect(await ok(t, 'get_room_affiliations', { room: ROOM, service: SERVICE })).to.deep.equal([{ jid: 'alice@localhost', affiliation: 'owner', reason: '' }]);
    });

    it('get_room_occupants, get_room_occupants_number and get_user_rooms follow who is joined', async () => {
      await join(bob, ROOM, 'Bob');
      expect(await ok(t, 'get_room_occupants_number', { room: ROOM, service: SERVICE })).to.equal(2);
      const occupants = await ok(t, 'get_room_occupants', { room: ROOM, service: SERVICE });
      expect(occupants).to.have.deep.members([
        { jid: 'alice@localhost/desk', nick: 'Alice', role: 'moderator' },
        { jid: 'bob@localhost/desk', nick: 'Bob', role: 'participant' },
      ]);
      expect(await ok(t, 'get_user_rooms', { user: 'bob', host: 'localhost' })).to.deep.equal([LOUNGE]);
      expect(await ok(t, 'get_user_rooms', { user: 'carol', host: 'localhost' })).to.deep.equal([]);
    });

    it('get_room_history has what occupants said, as they got it; the room is no longer empty', async () => {
      expect(await ok(t, 'rooms_empty_list', { service: SERVICE })).to.include(LOUNGE);
      await say(alice, ROOM, 'hello everyone', bob);
      await say(bob, ROOM, 'hi Alice ✓', alice);
      const history = await ok(t, 'get_room_history', { room: ROOM, service: SERVICE });
      expect(history).to.have.length(2);
      expect(history[0].timestamp).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      expect(history[0].message).to.contain('hello everyone').and.contain(`${LOUNGE}/Alice`);
      expect(history[1].message).to.contain('hi Alice ✓').and.contain(`${LOUNGE}/Bob`);
      expect(await ok(t, 'rooms_empty_list', { service: SERVICE })).to.not.include(LOUNGE);
    });

    it('change_room_option changes the running room: occupants are told (status 104), get_room_options shows it', async () => {
      const before = await ok(t, 'get_room_options', { room: ROOM, service: SERVICE });
      expect(before).to.deep.include({ name: 'title', value: '' });
      const told = next(bob, (s) => s.is('message') && hasStatus(s, '104'), 10_000);
      expect(await ok(t, 'change_room_option', { room: ROOM, service: SERVICE, option: 'title', value: 'The Lounge' })).to.equal(0);
      await told;
      expect(await ok(t, 'get_room_options', { room: ROOM, service: SERVICE })).to.deep.include({ name: 'title', value: 'The Lounge' });
      expect(await ok(t, 'change_room_option', { room: ROOM, service: SERVICE, option: 'members_only', value: 'false' })).to.equal(0);
      expect(await ok(t, 'get_room_options', { room: ROOM, service: SERVICE })).to.deep.include({ name: 'members_only', value: 'false' });
    });

    it('set_room_affiliation outcast bans an occupant at once (status 301); none removes it', async () => {
      const banned = next(bob, (s) => s.is('presence') && s.attrs.from === `${LOUNGE}/Bob` && s.attrs.type === 'unavailable' && hasStatus(s, '301'), 10_000);
      expect(await ok(t, 'set_room_affiliation', { room: ROOM, service: SERVICE, user: 'bob', host: 'localhost', affiliation: 'outcast' })).to.equal(0);
      await banned;
      expect(await ok(t, 'get_room_affiliation', { room: ROOM, service: SERVICE, jid: 'bob@localhost' })).to.equal('outcast');
      expect(await ok(t, 'get_room_occupants_number', { room: ROOM, service: SERVICE })).to.equal(1);
      expect(await ok(t, 'set_room_affiliation', { room: ROOM, service: SERVICE, user: 'bob', host: 'localhost', affiliation: 'none' })).to.equal(0);
      expect(await ok(t, 'get_room_affiliation', { room: ROOM, service: SERVICE, jid: 'bob@localhost' })).to.equal('none');
      expect(await ok(t, 'get_room_affiliations', { room: ROOM, service: SERVICE })).to.deep.equal([{ jid: 'alice@localhost', affiliation: 'owner', reason: '' }]);
      await join(bob, ROOM, 'Bob');
    });

    it('subscribe_room, get_subscribers, get_user_subscriptions and unsubscribe_room (MUC/Sub)', async () => {
      expect(await ok(t, 'change_room_option', { room: ROOM, service: SERVICE, option: 'allow_subscription', value: 'true' })).to.equal(0);
      const nodes = ['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:subject'];
      expect(await ok(t, 'subscribe_room', { user: 'carol', host: 'localhost', nick: 'Caro', room: ROOM, service: SERVICE, nodes })).to.have.members(nodes);
      expect(await ok(t, 'get_subscribers', { room: ROOM, service: SERVICE })).to.deep.equal(['carol@localhost']);
      const subscriptions = await ok(t, 'get_user_subscriptions', { user: 'carol', host: 'localhost' });
      expect(subscriptions).to.have.length(1);
      expect(subscriptions[0]).to.deep.include({ roomjid: LOUNGE, usernick: 'Caro' });
      expect(subscriptions[0].nodes).to.have.members(nodes);
      // A subscriber gets the room's messages without being joined (urn:xmpp:mucsub:nodes:messages).
      const event = next(carol, (s) => s.is('message') && s.toString().includes('through MUC/Sub'), 10_000);
      await say(alice, ROOM, 'through MUC/Sub', bob);
      await event;
      expect(await ok(t, 'unsubscribe_room', { user: 'carol', host: 'localhost', room: ROOM, service: SERVICE })).to.equal(0);
      expect(await ok(t, 'get_subscribers', { room: ROOM, service: SERVICE })).to.deep.equal([]);
      expect(await ok(t, 'get_user_subscriptions', { user: 'carol', host: 'localhost' })).to.deep.equal([]);
    });

    it('subscribe_room_many subscribes every listed user', async () => {
      const users = [
        { user: 'carol', host: 'localhost', nick: 'C' },
        { user: 'dave', host: 'localhost', nick: 'D' },
      ];
      expect(await ok(t, 'subscribe_room_many', { users, room: ROOM, service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:messages'] })).to.equal(0);
      expect(await ok(t, 'get_subscribers', { room: ROOM, service: SERVICE })).to.have.members(['carol@localhost', 'dave@localhost']);
      for (const { user, host } of users) expect(await ok(t, 'unsubscribe_room', { user, host, room: ROOM, service: SERVICE })).to.equal(0);
    });

    it('muc_register_nick reserves a nick on the service; muc_unregister_nick frees it', async () => {
      expect(await ok(t, 'muc_register_nick', { nick: 'Caro', user: 'carol', host: 'localhost', service: SERVICE })).to.equal(0);
      const refused = join(alice, ROOM, 'Caro').catch((err: Error) => err);
      expect(String(await refused)).to.match(/conflict/);
      expect(await ok(t, 'muc_unregister_nick', { user: 'carol', host: 'localhost', service: SERVICE })).to.equal(0);
      await join(carol, ROOM, 'Caro');
      await leave(carol, ROOM, 'Caro');
    });

    it('send_direct_invitation sends XEP-0249 invitations with password and reason, or without (none)', async () => {
      const invited = next(carol, (s) => s.is('message') && !!s.getChild('x', 'jabber:x:conference'), 10_000);
      expect(await ok(t, 'send_direct_invitation', { room: ROOM, service: SERVICE, password: 'none', reason: 'Come and see', users: ['carol@localhost'] })).to.equal(0);
      const x = (await invited).getChild('x', 'jabber:x:conference')!;
      expect(x.attrs.jid).to.equal(LOUNGE);
      expect(x.attrs.reason).to.equal('Come and see');
      expect(x.attrs.password).to.equal(undefined);
    });

    it('muc_online_rooms_by_regex, rooms_unused_* and rooms_empty_destroy', async () => {
      expect(await ok(t, 'create_room', { room: 'quiet', service: SERVICE, host: 'localhost' })).to.equal(0);
      expect(await ok(t, 'muc_online_rooms_by_regex', { service: SERVICE, regex: '^lou' })).to.deep.equal([{ jid: LOUNGE, public: 'true', participants: 2 }]);
      // lounge has occupants: not unused; quiet has nobody and no message.
      expect(await ok(t, 'rooms_unused_list', { service: SERVICE, days: 0 })).to.deep.equal([`quiet@${SERVICE}`]);
      expect(await ok(t, 'rooms_unused_list', { service: SERVICE, days: 30 })).to.deep.equal([]);
      expect(await ok(t, 'rooms_empty_list', { service: 'global' })).to.deep.equal([`quiet@${SERVICE}`]);
      expect(await ok(t, 'rooms_empty_destroy', { service: SERVICE })).to.equal('Destroyed rooms: 1');
      expect(await ok(t, 'muc_online_rooms', { service: 'global' })).to.deep.equal([LOUNGE]);
      expect(await ok(t, 'create_room', { room: 'idle', service: SERVICE, host: 'localhost' })).to.equal(0);
      expect(await ok(t, 'rooms_unused_destroy', { service: 'global', days: 0 })).to.deep.equal([`idle@${SERVICE}`]);
      expect(await ok(t, 'muc_online_rooms', { service: SERVICE })).to.deep.equal([LOUNGE]);
    });

    it('create_room_with_opts sets options, affiliations and subscribers (25.03 separators)', async () => {
      const options = [
        { name: 'title', value: 'Team ✓' },
        { name: 'members_only', value: 'true' },
        { name: 'allow_subscription', value: 'true' },
        { name: 'affiliations', value: 'owner=alice@localhost;member=bob@localhost' },
        { name: 'subscribers', value: 'dave@localhost=Dave=urn:xmpp:mucsub:nodes:messages=urn:xmpp:mucsub:nodes:subject;erin@example.com=Erin=messages' },
      ];
      expect(await ok(t, 'create_room_with_opts', { room: 'team', service: SERVICE, host: 'localhost', options })).to.equal(0);
      const got = await ok(t, 'get_room_options', { room: 'team', service: SERVICE });
      expect(got).to.deep.include.members([
        { name: 'title', value: 'Team ✓' },
        { name: 'members_only', value: 'true' },
      ]);
      expect(await ok(t, 'get_room_affiliations', { room: 'team', service: SERVICE })).to.have.deep.members([
        { jid: 'alice@localhost', affiliation: 'owner', reason: '' },
        { jid: 'bob@localhost', affiliation: 'member', reason: '' },
      ]);
      expect(await ok(t, 'get_subscribers', { room: 'team', service: SERVICE })).to.have.members(['dave@localhost', 'erin@example.com']);
      const dave = (await ok(t, 'get_user_subscriptions', { user: 'dave', host: 'localhost' })).find((entry: { roomjid: string }) => entry.roomjid === `team@${SERVICE}`);
      expect(dave.usernick).to.equal('Dave');
      expect(dave.nodes).to.have.members(['urn:xmpp:mucsub:nodes:messages', 'urn:xmpp:mucsub:nodes:subject']);
      // members_only: bob (member) may join, carol (neither member nor subscriber) may not.
      await join(bob, 'team', 'Bob');
      expect(String(await join(carol, 'team', 'Caro').catch((err: Error) => err))).to.match(/registration-required/);
    });

    it('destroy_room: occupants get the destroy presence, and the room is gone', async () => {
      const destroyed = next(bob, (s) => s.is('presence') && s.attrs.from === `team@${SERVICE}/Bob` && s.attrs.type === 'unavailable' && !!s.getChild('x', NS_MUC_USER)?.getChild('destroy'), 10_000);
      expect(await ok(t, 'destroy_room', { room: 'team', service: SERVICE })).to.equal(0);
      await destroyed;
      expect(await ok(t, 'muc_online_rooms', { service: SERVICE })).to.not.include(`team@${SERVICE}`);
      expect(await ok(t, 'get_user_subscriptions', { user: 'dave', host: 'localhost' })).to.deep.equal([]);
    });

    it('create_rooms_file makes persistent rooms that are there after a restart; destroy_rooms_file removes them', async () => {
      const file = joinPath(t.dir, 'rooms.txt');
      await writeFile(file, `# rooms for the event\nhall@${SERVICE}\n\nstage@${SERVICE}\n`);
      expect(await ok(t, 'create_rooms_file', { file })).to.equal(0);
      expect(await ok(t, 'get_room_options', { room: 'hall', service: SERVICE })).to.deep.include({ name: 'persistent', value: 'true' });
      // What the commands change in a persistent room is stored with it.
      expect(await ok(t, 'change_room_option', { room: 'hall', service: SERVICE, option: 'title', value: 'Main hall' })).to.equal(0);
      expect(await ok(t, 'change_room_option', { room: 'hall', service: SERVICE, option: 'allow_subscription', value: 'true' })).to.equal(0);
      expect(await ok(t, 'set_room_affiliation', { room: 'hall', service: SERVICE, user: 'bob', host: 'localhost', affiliation: 'admin' })).to.equal(0);
      expect(await ok(t, 'subscribe_room', { user: 'carol', host: 'localhost', nick: 'Caro', room: 'hall', service: SERVICE, nodes: ['urn:xmpp:mucsub:nodes:messages'] })).to.have.length(1);
      expect(await ok(t, 'muc_register_nick', { nick: 'Dee', user: 'dave', host: 'localhost', service: SERVICE })).to.equal(0);
      await stopAll(alice, bob, carol);
      t = await restart(t);
      alice = await connect(t, 'alice');
      bob = await connect(t, 'bob');
      carol = await connect(t, 'carol');
      const rooms = await ok(t, 'muc_online_rooms', { service: SERVICE });
      expect(rooms).to.include.members([`hall@${SERVICE}`, `stage@${SERVICE}`]);
      expect(await ok(t, 'get_room_options', { room: 'hall', service: SERVICE })).to.deep.include({ name: 'title', value: 'Main hall' });
      expect(await ok(t, 'get_room_affiliations', { room: 'hall', service: SERVICE })).to.deep.equal([{ jid: 'bob@localhost', affiliation: 'admin', reason: '' }]);
      expect(await ok(t, 'get_subscribers', { room: 'hall', service: SERVICE })).to.deep.equal(['carol@localhost']);
      expect(String(await join(alice, 'hall', 'Dee').catch((err: Error) => err))).to.match(/conflict/);
      expect(await ok(t, 'muc_unregister_nick', { user: 'dave', host: 'localhost', service: SERVICE })).to.equal(0);
      await join(alice, 'hall', 'Alice');
      await eventually(() => ok(t, 'get_room_occupants_number', { room: 'hall', service: SERVICE }), 1);
      const destroyed = next(alice, (s) => s.is('presence') && s.attrs.from === `hall@${SERVICE}/Alice` && s.attrs.type === 'unavailable', 10_000);
      expect(await ok(t, 'destroy_rooms_file', { file })).to.equal(0);
      await destroyed;
      const after = await ok(t, 'muc_online_rooms', { service: SERVICE });
      expect(after).to.not.include(`hall@${SERVICE}`);
      expect(after).to.not.include(`stage@${SERVICE}`);
    });
  });
}
