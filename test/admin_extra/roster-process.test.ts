/**
 * process_rosteritems on SQLite, MariaDB and PostgreSQL: every filter of the spec's grammar against
 * rosters made through the API and through real subscription requests, deletion seen by logged-in
 * clients, refusals that delete nothing, a scan longer than one page, and samples over XML-RPC and
 * servicectl.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { stopAll, xml, type Client } from '../support/xmpp.js';
import { ADMIN, nextPush, online, rosterConfig, sync, xmlrpcAdmin } from './roster-clients.js';

const USERS = ['u1', 'u2', 'u3', 'user_a', 'userxa'];

type Pair = { user: string; contact: string };

const pair = (user: string, contact: string): Pair => ({ user: user.includes('@') ? user : `${user}@localhost`, contact: contact.includes('@') || contact.includes('.') ? contact : `${contact}@localhost` });

for (const database of testDatabases()) {
  describe(`process_rosteritems on ${database.name}`, () => {
    let t: TestServer;
    const clients: Client[] = [];
    const api = (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
    const processItems = async (action: string, subs: string, asks: string, users: string, contacts: string): Promise<Pair[]> => {
      const res = await api('process_rosteritems', { action, subs, asks, users, contacts });
      expect(res.status, res.text).to.equal(200);
      return res.body;
    };
    const list = (subs: string, asks: string, users: string, contacts: string) => processItems('list', subs, asks, users, contacts);
    const add = async (localuser: string, user: string, host: string, subs: string) => {
      const res = await api('add_rosteritem', { localuser, localhost: 'localhost', user, host, nick: '', groups: [], subs });
      expect(res.status, res.text).to.equal(200);
    };

    // Every row of the rosters below, in the order the command answers (by user, then contact).
    const ALL: Pair[] = [
      pair('u1', 'gw.example.net'),
      pair('u1', 'r1@remote.example.net'),
      pair('u1', 'u2'),
      pair('u1', 'u3'),
      pair('u2', 'r2@remote.example.net'),
      pair('u2', 'u1'),
      pair('u3', 'r1@remote.example.net'),
      pair('u3', 'u1'),
      pair('user_a', 'u1'),
      pair('userxa', 'u1'),
    ];

    before(async () => {
      const settings = await database.settings('/tmp');
      const config = { ...rosterConfig(), ...serverSqlConfig(settings) };
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
      for (const user of USERS) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      await add('u1', 'u2', 'localhost', 'both'); // u2's side follows: u2 → u1 both
      await add('u1', '', 'gw.example.net', 'none');
      await add('u1', 'r1', 'remote.example.net', 'to');
      await add('u2', 'r2', 'remote.example.net', 'from');
      await add('u3', 'r1', 'remote.example.net', 'none');
      await add('user_a', 'u1', 'localhost', 'none');
      await add('userxa', 'u1', 'localhost', 'none');
      // A real request: u3 asks u1, who is offline. u3 has u1 "pending out", u1 holds a stored request ("in").
      const u3 = await online(t, 'u3', 'r');
      const asked = nextPush(u3, 'u1@localhost');
      await u3.send(xml('presence', { type: 'subscribe', to: 'u1@localhost' }));
      await asked;
      await stopAll(u3);
    });
    afterEach(async () => {
      await stopAll(...clients.splice(0));
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    it('lists every row with any, stored requests included, sorted by user then contact', async () => {
      expect(await list('any', 'any', 'any', 'any')).to.deep.equal(ALL);
    });

    it('filters by subscriptions, one or several', async () => {
      expect(await list('both', 'any', 'any', 'any')).to.deep.equal([pair('u1', 'u2'), pair('u2', 'u1')]);
      expect(await list('to:from', 'any', 'any', 'any')).to.deep.equal([pair('u1', 'r1@remote.example.net'), pair('u2', 'r2@remote.example.net')]);
      expect(await list('none', 'any', 'u1@localhost', 'any')).to.deep.equal([pair('u1', 'gw.example.net'), pair('u1', 'u3')]);
    });

    it('filters by what is pending: out, in (a stored request), none', async () => {
      expect(await list('any', 'out', 'any', 'any')).to.deep.equal([pair('u3', 'u1')]);
      expect(await list('any', 'in', 'any', 'any')).to.deep.equal([pair('u1', 'u3')]);
      expect(await list('any', 'in:out', 'any', 'any')).to.deep.equal([pair('u1', 'u3'), pair('u3', 'u1')]);
      expect(await list('none', 'none', 'u3@localhost', 'any')).to.deep.equal([pair('u3', 'r1@remote.example.net')]);
    });

    it('filters users and contacts with lists, globs, classes and negation', async () => {
      expect(await list('any', 'any', 'u[12]@localhost', '*@remote.example.net')).to.deep.equal([pair('u1', 'r1@remote.example.net'), pair('u2', 'r2@remote.example.net')]);
      expect(await list('any', 'any', 'u2@localhost:u3@localhost', 'r?@*')).to.deep.equal([pair('u2', 'r2@remote.example.net'), pair('u3', 'r1@remote.example.net')]);
      expect(await list('any', 'any', '!u1@localhost', 'u1@localhost')).to.deep.equal([pair('u2', 'u1'), pair('u3', 'u1'), pair('user_a', 'u1'), pair('userxa', 'u1')]);
      expect(await list('any', 'any', 'any', '*@!localhost')).to.deep.equal([pair('u1', 'r1@remote.example.net'), pair('u2', 'r2@remote.example.net'), pair('u3', 'r1@remote.example.net')]);
      // A host alone is a contact without a user part; *@* is every user JID.
      expect(await list('any', 'any', 'any', 'gw.example.net')).to.deep.equal([pair('u1', 'gw.example.net')]);
      expect((await list('any', 'any', 'any', '*@*')).map((p) => p.contact)).to.not.include('gw.example.net');
      expect(await list('any', 'any', 'U1@LOCALHOST', 'U2@localhost')).to.deep.equal([pair('u1', 'u2')]);
    });

    it("takes the SQL row's wildcards: % for any sequence, _ for one character, [_] for the underscore", async () => {
      expect(await list('any', 'any', '%@localhost', '%@remote.%')).to.deep.equal([pair('u1', 'r1@remote.example.net'), pair('u2', 'r2@remote.example.net'), pair('u3', 'r1@remote.example.net')]);
      expect(await list('any', 'any', 'user_a@localhost', 'any')).to.deep.equal([pair('user_a', 'u1'), pair('userxa', 'u1')]);
      expect(await list('any', 'any', 'user[_]a@localhost', 'any')).to.deep.equal([pair('user_a', 'u1')]);
    });

    it('refuses a bad action or filter, naming it, and deletes nothing', async () => {
      const cases: Array<[Record<string, string>, string, RegExp]> = [
        [{ action: 'purge' }, 'action', /action: 'purge' is not one of list, delete/],
        [{ subs: 'sometimes' }, 'subs', /subs: 'sometimes' is not one of any, none, from, to, both/],
        [{ asks: 'both' }, 'asks', /asks: 'both' is not one of any, none, out, in/],
        [{ users: 'u1@localhost:' }, 'users', /users 'u1@localhost:' has an empty alternative/],
        [{ contacts: 'u[1@localhost' }, 'contacts', /contacts: 'u\[1' has a '\[' without its '\]'/],
      ];
      for (const [change, argument, message] of cases) {
        const res = await api('process_rosteritems', { action: 'delete', subs: 'any', asks: 'any', users: 'any', contacts: 'any', ...change });
        expect(res.status, argument).to.equal(400);
        expect(res.body.message, argument).to.match(message);
      }
      const missing = await api('process_rosteritems', { action: 'list', subs: 'any', asks: 'any', users: 'any' });
      expect(missing.status).to.equal(400);
      expect(missing.body.message).to.match(/contacts/);
      expect(await list('any', 'any', 'any', 'any')).to.deep.equal(ALL);
    });

    it('answers over XML-RPC and servicectl', async () => {
      const rpc = await xmlrpcAdmin(t, 'process_rosteritems', { action: 'list', subs: 'both', asks: 'any', users: 'any', contacts: 'any' });
      expect(rpc).to.deep.equal({ result: { response: [{ user: 'u1@localhost', contact: 'u2@localhost' }, { user: 'u2@localhost', contact: 'u1@localhost' }] } });
      const ctl = await servicectl(t.configFile, 'process_rosteritems', 'list', 'to:from', 'any', 'any', '*@remote.example.net');
      expect(ctl).to.deep.include({ code: 0, stderr: '' });
      expect(ctl.stdout).to.equal(['user          contact', 'u1@localhost  r1@remote.example.net', 'u2@localhost  r2@remote.example.net', ''].join('\n'));
    });

    it('delete removes what matches as a roster remove does: the owner is pushed the removal, the contact follows', async () => {
      const u1 = await online(t, 'u1', 'del');
      const u2 = await online(t, 'u2', 'del');
      clients.push(u1, u2);
      const removal = nextPush(u1, 'u2@localhost', 'remove');
      const u2Side = nextPush(u2, 'u1@localhost', 'none');
      expect(await processItems('delete', 'both', 'any', 'u1@localhost', 'any')).to.deep.equal([pair('u1', 'u2')]);
      await removal;
      await u2Side;
      // The stored request is answered by deleting it: u3's request is denied.
      expect(await processItems('delete', 'none', 'in', 'any', 'any')).to.deep.equal([pair('u1', 'u3')]);
      await sync(u1);
      const left = await list('any', 'any', 'any', 'any');
      expect(left).to.deep.equal(ALL.filter((p) => !(p.user === 'u1@localhost' && ['u2@localhost', 'u3@localhost'].includes(p.contact))));
      expect(await list('any', 'any', 'u2@localhost', 'u1@localhost')).to.deep.equal([pair('u2', 'u1')]);
      expect((await api('get_roster', { user: 'u2', host: 'localhost' })).body).to.deep.include({ jid: 'u1@localhost', nick: '', subscription: 'none', pending: 'none', groups: [] });
      // u3's request was denied: nothing pending any more.
      expect(await list('any', 'out', 'any', 'any')).to.deep.equal([]);
    });

    it('reads a large table page by page', async () => {
      // Rows seeded straight into the table: more than two pages of the scan, over many owners.
      const db = t.server.services.storage.db('sql');
      const rows = [];
      for (let i = 0; i < 2100; i++) {
        rows.push({ host: 'localhost', username: `bulk${String(Math.floor(i / 30)).padStart(3, '0')}`, jid: `c${String(i % 30).padStart(2, '0')}@bulk.example`, subscription: i % 2 ? 'both' : 'none' });
      }
      for (let i = 0; i < rows.length; i += 500) await db('roster_items').insert(rows.slice(i, i + 500));
      const found = await list('any', 'any', 'bulk*@localhost', 'any');
      expect(found).to.have.length(2100);
      expect(found).to.deep.equal(rows.map((r) => pair(`${r.username}@localhost`, r.jid)));
      expect(await list('both', 'none', 'bulk*@localhost', '*@bulk.example')).to.have.length(1050);
    });
  });
}

/**
 * `_` and `%` in user and contact patterns follow the store the rosters are in, as the spec's table gives
 * each backend its row: literal on the embedded store (ejabberd's Mnesia row), SQL wildcards on the SQL
 * store. john_doe and johnxdoe each have friend@remote.example.net.
 */
describe('process_rosteritems: _ and % follow the roster store', () => {
  interface StoreCase {
    readonly name: string;
    /** Where mod_roster keeps its rows, to check the case runs on the store it names. */
    readonly store: 'sql' | 'mnesia';
    readonly config: () => Promise<Record<string, unknown>>;
    readonly cleanup?: () => Promise<void>;
  }
  const embedded: StoreCase[] = [
    { name: 'the embedded store (default_db: mnesia)', store: 'mnesia', config: async () => ({ ...rosterConfig(), default_db: 'mnesia', auth_method: 'mnesia' }) },
    {
      name: "the embedded store chosen by mod_roster's db_type: mnesia",
      store: 'mnesia',
      config: async () => {
        const config = rosterConfig();
        (config.modules as Record<string, Record<string, unknown>>).mod_roster!.db_type = 'mnesia';
        return config;
      },
    },
  ];
  const sql: StoreCase[] = testDatabases().map((database) => ({
    name: `the SQL store on ${database.name}`,
    store: 'sql',
    config: async () => ({ ...rosterConfig(), ...serverSqlConfig(await database.settings('/tmp')) }),
    cleanup: () => database.cleanup(),
  }));

  for (const storeCase of [...embedded, ...sql]) {
    const wildcards = storeCase.store === 'sql';
    describe(`on ${storeCase.name}`, () => {
      let t: TestServer;
      const FRIEND = 'friend@remote.example.net';
      const call = async (command: string, args: Record<string, unknown>) => {
        const res = await t.api(command, args, { basic: ADMIN });
        expect(res.status, `${command}: ${res.text}`).to.equal(200);
        return res.body;
      };
      const processItems = (action: string, users: string) => call('process_rosteritems', { action, subs: 'any', asks: 'any', users, contacts: 'any' });
      const contactsOf = async (user: string) => ((await call('get_roster', { user, host: 'localhost' })) as Array<{ jid: string }>).map((item) => item.jid);

      // One server per case: the list test comes before the delete test.
      before(async () => {
        t = await TestServer.start(await storeCase.config());
        await t.bootstrapAdmin();
        for (const user of ['john_doe', 'johnxdoe']) {
          await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
          await call('add_rosteritem', { localuser: user, localhost: 'localhost', user: 'friend', host: 'remote.example.net', nick: '', groups: [], subs: 'both' });
        }
        // The rows are in the store this case is about.
        const owners = await t.server.services.storage.db(storeCase.store)('roster_items').distinct('username').orderBy('username');
        expect(owners.map((row: { username: string }) => row.username)).to.deep.equal(['john_doe', 'johnxdoe']);
      });
      after(async () => {
        await t?.stop();
        await storeCase.cleanup?.();
      });

      if (wildcards) {
        it('lists both users for john_doe (_ is one character) and john_doe alone for john[_]doe', async () => {
          expect(await processItems('list', 'john_doe@localhost')).to.deep.equal([pair('john_doe', FRIEND), pair('johnxdoe', FRIEND)]);
          expect(await processItems('list', 'john[_]doe@localhost')).to.deep.equal([pair('john_doe', FRIEND)]);
          expect(await processItems('list', 'john%@localhost')).to.deep.equal([pair('john_doe', FRIEND), pair('johnxdoe', FRIEND)]);
          // The Mnesia row's globs work here too.
          expect(await processItems('list', 'john?doe@localhost:nobody@localhost')).to.have.length(2);
        });

        it('deletes the items of john_doe alone with john[_]doe, keeping those of johnxdoe', async () => {
          expect(await processItems('delete', 'john[_]doe@localhost')).to.deep.equal([pair('john_doe', FRIEND)]);
          expect(await contactsOf('john_doe')).to.deep.equal([]);
          expect(await contactsOf('johnxdoe')).to.deep.equal([FRIEND]);
        });
      } else {
        it('lists john_doe alone for john_doe: _ and % are ordinary characters', async () => {
          expect(await processItems('list', 'john_doe@localhost')).to.deep.equal([pair('john_doe', FRIEND)]);
          expect(await processItems('list', 'john%@localhost')).to.deep.equal([]);
          expect(await processItems('list', '%@localhost')).to.deep.equal([]);
          // The globs of the Mnesia row still work, and match _ as any other character.
          expect(await processItems('list', 'john?doe@localhost')).to.deep.equal([pair('john_doe', FRIEND), pair('johnxdoe', FRIEND)]);
          expect(await processItems('list', '*_doe@localhost')).to.deep.equal([pair('john_doe', FRIEND)]);
          expect(await processItems('list', '!john_doe@localhost')).to.deep.equal([pair('johnxdoe', FRIEND)]);
        });

        it('deletes the items of john_doe alone, keeping those of johnxdoe', async () => {
          expect(await processItems('delete', 'john_doe@localhost')).to.deep.equal([pair('john_doe', FRIEND)]);
          expect(await contactsOf('john_doe')).to.deep.equal([]);
          expect(await contactsOf('johnxdoe')).to.deep.equal([FRIEND]);
          expect(await processItems('list', 'any')).to.deep.equal([pair('johnxdoe', FRIEND)]);
        });
      }
    });
  }
});
