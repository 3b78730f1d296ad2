/**
 * Session sources: a module (here the fixture mod_fixture_sessions, standing in for a cluster module)
 * reports sessions bound on another node, and every other module sees them through the asynchronous
 * session directory — the session commands over /api list and count them — while the module runs, and
 * no longer once it stops. This node's own session wins over a source's copy of the same JID, a failing
 * source is logged and skipped, and kicking a reported session only asks its outlet to close.
 */
import { expect } from 'chai';
import { TestServer } from '../support/server.js';
import { login, stopAll, xmppConfig, type Client } from '../support/xmpp.js';

const ADMIN = 'admin@localhost:adminpass';
const REMOTE = 'remote-user@localhost/elsewhere';
const LOCAL = 'alice@localhost/here';

describe('session sources from modules', () => {
  let t: TestServer;
  let alice: Client | undefined;
  const call = async (command: string, args: Record<string, unknown> = {}) => {
    const res = await t.api(command, args, { basic: ADMIN });
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };
  const withSource = (options: Record<string, unknown> | undefined) =>
    xmppConfig({ mod_admin_extra: {}, ...(options ? { mod_fixture_sessions: options } : {}) });
  const reload = async (options: Record<string, unknown> | undefined) => {
    await t.writeConfig(withSource(options));
    expect(await call('reload_config')).to.equal(0);
  };

  before(async () => {
    t = await TestServer.start(withSource({}), { plugins: ['mod_fixture_sessions'] });
    await t.bootstrapAdmin();
    await t.server.services.accounts.register('alice', 'localhost', 'alice-pw');
    await t.server.services.accounts.register('remote-user', 'localhost', 'remote-pw');
    alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'here' });
  });
  after(async () => {
    await stopAll(alice);
    await t.stop();
  });

  it("lists and counts the source's sessions with this node's while its module runs", async () => {
    expect(await call('connected_users')).to.deep.equal([LOCAL, REMOTE]);
    expect(await call('connected_users_number')).to.equal(2);
    expect(await call('user_resources', { user: 'remote-user', host: 'localhost' })).to.deep.equal(['elsewhere']);
    expect(await call('connected_users_vhost', { host: 'localhost' })).to.deep.equal([LOCAL, REMOTE]);
    expect(await call('stats_host', { name: 'onlineusers', host: 'localhost' })).to.equal(2);
    expect(await call('stats', { name: 'onlineusers' })).to.equal(2);
    expect(await call('stats', { name: 'onlineusersnode' })).to.equal(1);
    const [info] = await call('user_sessions_info', { user: 'remote-user', host: 'localhost' });
    expect(info).to.include({ resource: 'elsewhere', ip: '192.0.2.7', connection: 'c2s_tls', priority: 5, status: 'available', statustext: 'on another node' });
  });

  it("kicks a reported session through its outlet, and leaves ending it to its node", async () => {
    await call('kick_session', { user: 'remote-user', host: 'localhost', resource: 'elsewhere', reason: 'bye' });
    expect(await call('fixture_sessions_kicked')).to.deep.equal([`${REMOTE}: policy-violation`]);
    // No session hooks ran here for it: this node did not bind it, and still lists what the source says.
    expect(await call('user_resources', { user: 'remote-user', host: 'localhost' })).to.deep.equal(['elsewhere']);
    expect(await call('connected_users')).to.deep.equal([LOCAL, REMOTE]);
  });

  it("prefers this node's session to a source's copy, and skips a source that fails", async () => {
    await reload({ shadow: true, broken: true });
    expect(await call('connected_users')).to.deep.equal([LOCAL, REMOTE]);
    const sessions = await call('user_sessions_info', { user: 'alice', host: 'localhost' });
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.include({ resource: 'here', ip: '127.0.0.1' });
    expect(await call('user_resources', { user: 'remote-user', host: 'localhost' })).to.deep.equal(['elsewhere']);
    expect(t.logged((l) => l.msg === 'a session source of mod_fixture_sessions failed; its sessions are left out' && l.question === 'all')).to.not.be.empty;
  });

  it('no longer shows them once the module stops', async () => {
    await reload(undefined);
    expect(t.logged((l) => l.msg === 'module mod_fixture_sessions stopped')).to.not.be.empty;
    expect(await call('connected_users')).to.deep.equal([LOCAL]);
    expect(await call('connected_users_number')).to.equal(1);
    expect(await call('user_resources', { user: 'remote-user', host: 'localhost' })).to.deep.equal([]);
    expect(await call('connected_users_vhost', { host: 'localhost' })).to.deep.equal([LOCAL]);
    expect(await call('stats_host', { name: 'onlineusers', host: 'localhost' })).to.equal(1);
    expect(await call('stats', { name: 'onlineusers' })).to.equal(1);
    expect((await call('user_sessions_info', { user: 'remote-user', host: 'localhost' })) as unknown[]).to.be.empty;
  });
});
