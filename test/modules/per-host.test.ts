/**
 * Modules per virtual host (host_config: <host>: modules:): a per-host module (mod_version) runs once for each
 * host it is enabled on, each with that host's options, answers for its host only, and reload_config starts
 * and stops instances as the hosts' modules change. A module that runs for the whole server cannot be
 * configured per host.
 */
import { expect } from 'chai';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { TestServer, type RawConfig } from '../support/server.js';
import { xmppConfig } from '../support/xmpp.js';

/** A version query to `host` from an account of it; the <query/> (or the error) as text. */
async function askVersion(t: TestServer, user: string, host: string): Promise<string> {
  const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
  try {
    await peer.login(user, 'pw', { host, resource: 'r' });
    peer.write(`<iq type='get' id='v1' to='${host}'><query xmlns='jabber:iq:version'/></iq>`);
    return (await peer.waitFor(/<iq\b[^>]*id=['"]v1['"][\s\S]*?<\/iq>/))[0];
  } finally {
    peer.destroy();
  }
}

function config(hostConfig: Record<string, unknown>, modules: Record<string, unknown> = { mod_version: { show_os: true } }): RawConfig {
  const c = xmppConfig(modules);
  c.hosts = ['localhost', 'example.com', 'example.net'];
  c.host_config = hostConfig;
  return c;
}

describe('modules per virtual host', () => {
  let t: TestServer;

  before(async () => {
    t = await TestServer.start(
      config({
        'example.com': { modules: { mod_version: { show_os: false } } },
        'example.net': { modules: { mod_version: false } },
      }),
    );
    for (const host of ['localhost', 'example.com', 'example.net']) await t.server.services.accounts.register('user', host, 'pw');
  });
  after(() => t.stop());

  it('runs one instance per host, each with its host\'s options', async () => {
    expect(t.logged((l) => /^module mod_version@\S+ \S+ started$/.test(l.msg)).map((l) => l.host).sort()).to.deep.equal(['example.com', 'localhost']);
    const withOs = await askVersion(t, 'user', 'localhost');
    expect(withOs).to.match(/<os>/);
    const withoutOs = await askVersion(t, 'user', 'example.com');
    expect(withoutOs).to.match(/<version>/).and.not.match(/<os>/);
  });

  it('answers nothing on a host where it is disabled', async () => {
    expect(await askVersion(t, 'user', 'example.net')).to.match(/type=['"]error['"][\s\S]*<service-unavailable/);
  });

  it('starts and stops instances when reload_config changes a host\'s modules', async () => {
    await t.writeConfig(config({ 'example.net': { modules: { mod_version: { show_os: false } } } }));
    await t.server.reloadConfig();
    const answer = await askVersion(t, 'user', 'example.net');
    expect(answer).to.match(/<version>/).and.not.match(/<os>/);
    // example.com lost its override: its instance was reloaded with the top-level options.
    expect(await askVersion(t, 'user', 'example.com')).to.match(/<os>/);
    await t.writeConfig(config({}, {}));
    await t.server.reloadConfig();
    for (const host of ['localhost', 'example.com', 'example.net']) expect(await askVersion(t, 'user', host)).to.match(/<service-unavailable/);
    expect(t.logged((l) => l.msg === 'module mod_version@example.net stopped')).to.have.length(1);
  });

  it('enables a module on one host only', async () => {
    await t.writeConfig(config({ 'example.com': { modules: { mod_version: {} } } }, {}));
    await t.server.reloadConfig();
    expect(await askVersion(t, 'user', 'example.com')).to.match(/<version>/);
    expect(await askVersion(t, 'user', 'localhost')).to.match(/<service-unavailable/);
  });

  it("refuses per-host settings for a module that runs for the whole server, and a per-host module's bad options", async () => {
    await t.writeConfig(config({ 'example.com': { modules: { mod_roster: {}, mod_version: { show_os: 'sometimes' } } } }));
    const err = await t.server.reloadConfig().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).to.match(/host_config\."?example\.com"?\.modules\.mod_roster: mod_roster runs for the whole server: it cannot be enabled, disabled or configured per host/);
    expect(err?.message).to.match(/host_config\."?example\.com"?\.modules\.mod_version\.show_os: expected true or false, got "sometimes"/);
  });
});
