/**
 * The roster commands next to shared roster groups (mod_shared_roster): get_roster shows shared contacts
 * as clients see them, delete_rosteritem will not pretend to delete one, and the batch commands neither
 * count shared contacts against max_roster_size nor copy a shared group into the items they store.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { ADMIN, rosterConfig } from './roster-clients.js';

describe('mod_admin_extra roster commands with shared roster groups', () => {
  let t: TestServer;
  const api = async (command: string, args: Record<string, unknown>) => t.api(command, args, { basic: ADMIN });
  const ok = async (command: string, args: Record<string, unknown>) => {
    const res = await api(command, args);
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    const config = rosterConfig(3);
    (config.modules as Record<string, unknown>).mod_shared_roster = {};
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['ann', 'ben', 'cid', 'dot']) await t.server.services.accounts.register(user, 'example.com', `${user}-pw`);
    await ok('srg_create', { group: 'staff', host: 'example.com', label: 'Staff', description: '', display: ['staff'] });
    for (const user of ['ann', 'ben', 'cid', 'dot']) await ok('srg_user_add', { user, host: 'example.com', group: 'staff', grouphost: 'example.com' });
  });
  after(() => t.stop());

  it('get_roster and get_roster_count include shared contacts; delete_rosteritem refuses them with 409', async () => {
    expect(await ok('get_roster', { user: 'ann', host: 'example.com' })).to.deep.equal(
      ['ben', 'cid', 'dot'].map((u) => ({ jid: `${u}@example.com`, nick: '', subscription: 'both', pending: 'none', groups: ['Staff'] })),
    );
    expect(await ok('get_roster_count', { user: 'ann', host: 'example.com' })).to.equal(3);
    const res = await api('delete_rosteritem', { localuser: 'ann', localhost: 'example.com', user: 'ben', host: 'example.com' });
    expect(res.status).to.equal(409);
    expect(res.body.message).to.equal('ben@example.com is in the roster of ann@example.com only through a shared roster group: remove it from the group (srg_user_del) instead');
  });

  it('push_alltoall stores its own group only, and counts stored items against max_roster_size', async () => {
    // Three shared contacts each, and max_roster_size 3: storing three items is still within the limit.
    expect(await ok('push_alltoall', { host: 'example.com', group: 'Everybody' })).to.equal(0);
    expect((await ok('get_roster', { user: 'ann', host: 'example.com' }))[0]).to.deep.equal({ jid: 'ben@example.com', nick: 'ben', subscription: 'both', pending: 'none', groups: ['Everybody', 'Staff'] });
    // Without the shared group, what is stored remains: the command's group, not the shared one.
    await ok('srg_user_del', { user: 'ben', host: 'example.com', group: 'staff', grouphost: 'example.com' });
    expect((await ok('get_roster', { user: 'ann', host: 'example.com' }))[0]).to.deep.equal({ jid: 'ben@example.com', nick: 'ben', subscription: 'both', pending: 'none', groups: ['Everybody'] });
    // Now a real item: delete_rosteritem removes what is stored.
    expect(await ok('delete_rosteritem', { localuser: 'ann', localhost: 'example.com', user: 'ben', host: 'example.com' })).to.equal(0);
    expect((await ok('get_roster', { user: 'ann', host: 'example.com' })).map((c: { jid: string }) => c.jid)).to.deep.equal(['cid@example.com', 'dot@example.com']);
  });
});
