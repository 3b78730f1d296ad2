/**
 * mod_shared_roster's tables on SQLite, MariaDB and PostgreSQL: groups, labels and descriptions exactly as
 * given (case and non-ASCII included), displayed groups in the order added, members of several vhosts and
 * the special members survive a restart of the module; removing an account or a group removes its rows.
 */
import { expect } from 'chai';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer, type RawConfig } from '../support/server.js';
import { stopAll } from '../support/xmpp.js';
import { ADMIN, MODULES, config, nextPush, online, rosterItems } from './shared-roster-support.js';

for (const database of testDatabases()) {
  describe(`shared roster groups on ${database.name}`, () => {
    let t: TestServer;
    const api = async (command: string, args: Record<string, unknown>) => {
      const res = await t.api(command, args, { basic: ADMIN });
      expect(res.status, `${command}: ${res.text}`).to.equal(200);
      return res.body;
    };
    const configWith = async (modules: Record<string, unknown>): Promise<RawConfig> => ({ ...config(modules), ...serverSqlConfig(settings) });
    let settings: Awaited<ReturnType<typeof database.settings>>;
    const rows = (table: string) => t.server.services.storage.db('sql')(table).select('*');

    before(async () => {
      settings = await database.settings('/tmp');
      const raw = await configWith(MODULES);
      t = await TestServer.start(raw);
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'carol']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
      await t.server.services.accounts.register('erin', 'example.com', 'erin-pw');
    });
    after(async () => {
      await t?.stop();
      await database.cleanup();
    });

    /** Stops mod_shared_roster and starts it again: what it answers then comes from the tables. */
    const restartModule = async () => {
      const stopped = () => t.logged((l) => l.module === 'mod_shared_roster' && l.msg === 'module mod_shared_roster stopped').length;
      const before = stopped();
      const { mod_shared_roster: _, ...without } = MODULES;
      for (const modules of [without, MODULES]) {
        const raw = await configWith(modules);
        await t.writeConfig(raw);
        await t.server.reloadConfig();
      }
      expect(stopped()).to.equal(before + 1);
    };

    it('keeps groups, displayed lists and members across a restart, exactly as given', async () => {
      await api('srg_create', { group: 'partners', host: 'example.com', label: 'Partners', description: '', display: [] });
      await api('srg_create', { group: 'Team', host: 'localhost', label: 'Upper', description: 'differs by case', display: [] });
      await api('srg_create', { group: 'team', host: 'localhost', label: 'Tëam ✓', description: 'Ünïcode 😀 <&>', display: ['team', 'partners@example.com', 'Team'] });
      await api('srg_create', { group: 'everyone', host: 'localhost', label: '', description: '', display: [] });
      await api('srg_user_add', { user: 'alice', host: 'localhost', group: 'team', grouphost: 'localhost' });
      await api('srg_user_add', { user: 'bob', host: 'localhost', group: 'team', grouphost: 'localhost' });
      await api('srg_user_add', { user: 'erin', host: 'example.com', group: 'partners', grouphost: 'example.com' });
      await api('srg_user_add', { user: 'carol', host: 'localhost', group: 'Team', grouphost: 'localhost' });
      await api('srg_user_add', { user: '@all@', host: 'localhost', group: 'everyone', grouphost: 'localhost' });
      await api('srg_user_add', { user: '@online@', host: 'localhost', group: 'everyone', grouphost: 'localhost' });
      await api('srg_add_displayed', { group: 'everyone', host: 'localhost', add: 'team' });
      await api('srg_del_displayed', { group: 'team', host: 'localhost', del: 'partners@example.com' });
      await api('srg_add_displayed', { group: 'team', host: 'localhost', add: 'partners@example.com' });

      const answers = async () => ({
        localhost: await api('srg_list', { host: 'localhost' }),
        example: await api('srg_list', { host: 'example.com' }),
        team: await api('srg_get_info', { group: 'team', host: 'localhost' }),
        upper: await api('srg_get_info', { group: 'Team', host: 'localhost' }),
        everyone: await api('srg_get_info', { group: 'everyone', host: 'localhost' }),
        members: await api('srg_get_members', { group: 'team', host: 'localhost' }),
        upperMembers: await api('srg_get_members', { group: 'Team', host: 'localhost' }),
        partners: await api('srg_get_members', { group: 'partners', host: 'example.com' }),
      });
      const before = await answers();
      expect(before.localhost).to.deep.equal(['Team', 'everyone', 'team']);
      expect(before.team).to.deep.equal([
        { key: 'label', value: 'Tëam ✓' },
        { key: 'description', value: 'Ünïcode 😀 <&>' },
        { key: 'displayed_groups', value: 'team, Team, partners@example.com' },
        { key: 'all_users', value: 'false' },
        { key: 'online_users', value: 'false' },
      ]);
      expect(before.everyone.slice(2)).to.deep.equal([
        { key: 'displayed_groups', value: 'team' },
        { key: 'all_users', value: 'true' },
        { key: 'online_users', value: 'true' },
      ]);
      expect(before.members).to.deep.equal(['alice@localhost', 'bob@localhost']);
      expect(before.upperMembers).to.deep.equal(['carol@localhost']);

      await restartModule();
      expect(await answers()).to.deep.equal(before);

      // What a client sees comes from the reloaded groups too.
      const alice = await online(t, 'alice');
      try {
        expect(await rosterItems(alice)).to.deep.equal([
          { jid: 'bob@localhost', subscription: 'both', groups: ['Tëam ✓'] },
          { jid: 'carol@localhost', subscription: 'both', groups: ['Upper'] },
          { jid: 'erin@example.com', subscription: 'both', groups: ['Partners'] },
        ]);
      } finally {
        await stopAll(alice);
      }
    });

    it('deletes the rows of a removed account and of a deleted group', async () => {
      await api('unregister', { user: 'bob', host: 'localhost' });
      expect((await rows('shared_roster_members')).filter((r: any) => r.username === 'bob')).to.deep.equal([]);
      expect(await api('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(['alice@localhost']);

      await api('srg_delete', { group: 'partners', host: 'example.com' });
      expect((await rows('shared_roster_groups')).map((r: any) => r.name).sort()).to.deep.equal(['Team', 'everyone', 'team']);
      expect((await rows('shared_roster_members')).filter((r: any) => r.name === 'partners')).to.deep.equal([]);
      expect((await rows('shared_roster_displayed')).filter((r: any) => r.displayed_name === 'partners')).to.deep.equal([]);
      expect(await api('srg_get_displayed', { group: 'team', host: 'localhost' })).to.deep.equal(['team', 'Team']);

      await restartModule();
      expect(await api('srg_list', { host: 'example.com' })).to.deep.equal([]);
      expect(await api('srg_get_displayed', { group: 'team', host: 'localhost' })).to.deep.equal(['team', 'Team']);
      expect(await api('srg_get_members', { group: 'team', host: 'localhost' })).to.deep.equal(['alice@localhost']);
    });

    it('reads the tables again on clear_cache, pushing what changed to online clients', async () => {
      const alice = await online(t, 'alice');
      try {
        expect((await rosterItems(alice)).map((i) => i.jid)).to.include('carol@localhost');
        // An operator's change made in the database directly: carol leaves Team.
        await t.server.services.storage.db('sql')('shared_roster_members').where({ name: 'Team', username: 'carol' }).delete();
        const removed = nextPush(alice, 'carol@localhost');
        expect(await api('clear_cache', {})).to.equal(0);
        expect(await removed).to.deep.equal({ jid: 'carol@localhost', subscription: 'remove' });
        expect(await api('srg_get_members', { group: 'Team', host: 'localhost' })).to.deep.equal([]);
      } finally {
        await stopAll(alice);
      }
    });
  });
}
