/**
 * The embedded database's commands under workers (`workers: 2`, as config.example.yml runs the server): worker 1
 * answers servicectl and does the work, and every worker then serves the new data. backup and dump copy from
 * worker 1's connection while both workers write; restore and load replace the data, after which a worker that
 * had read the old data (a credential it verified, a session of an account that is gone) drops it; an installed
 * fallback is restored by worker 1 when the server starts again, before the other worker opens the files.
 */
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { freePort, respawnServer, spawnServer, type ServerProcess } from '../support/process.js';
import { request } from '../support/server.js';
import { WorkerLogins, twoWorkersConfig } from '../support/worker-logins.js';
import { stopAll, xml, type Client } from '../support/xmpp.js';

describe('embedded database commands under workers', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);
  const register = async (user: string) => {
    const res = await request(`http://127.0.0.1:${proc.port}/api/register`, { method: 'POST', body: JSON.stringify({ user, host: 'localhost', password: `${user}-pw` }) });
    expect(res.status, res.text).to.equal(200);
  };
  const users = async () => ((await request(`http://127.0.0.1:${proc.port}/api/registered_users`, { method: 'POST', body: '{"host":"localhost"}' })).body as string[]).sort();
  /** HTTP Basic as `user` four times: the connections alternate between the workers, so both check (and cache) it. */
  const basicStatuses = async (user: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(`http://127.0.0.1:${proc.port}/api/get_roster`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${user}@localhost:${user}-pw`).toString('base64')}` },
        body: JSON.stringify({ user, host: 'localhost' }),
      });
      statuses.push(res.status);
    }
    return statuses;
  };
  const streamErrors = (client: Client) => {
    const errors: string[] = [];
    client.on('error', (err: any) => errors.push(String(err?.condition ?? err?.message)));
    return errors;
  };
  const waitFor = async (what: () => boolean) => {
    for (let i = 0; i < 50 && !what(); i++) await new Promise((r) => setTimeout(r, 100));
  };
  const config = (port: number) => {
    return twoWorkersConfig(port, c2s, {
      api_permissions: {
        'loopback admin': { who: { acl: 'loopback' }, what: '*' },
        users: { who: 'all', from: ['mod_http_api'], what: ['get_roster'] },
      },
      modules: { mod_http_api: {}, mod_admin_extra: {}, mod_roster: {}, mod_presence: {} },
    });
  };
  const backup = () => join(proc.dir, 'w.backup');
  const dump = () => join(proc.dir, 'w.dump');

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer(config);
    const started = await servicectl(proc.configFile, 'started');
    expect(started.code, started.stderr).to.equal(0);
    for (const user of ['alice', 'bob']) await register(user);
  });
  after(async () => {
    await stopAll(...logins.clients);
    await proc?.cleanup();
  });

  it('backup and dump work while both workers write', async () => {
    const made = await Promise.all([servicectl(proc.configFile, 'backup', backup()), register('carol'), register('dave')]);
    expect(made[0].code, made[0].stderr).to.equal(0);
    expect(made[0].stdout).to.match(/^Backup of sql \(\d+ tables, \d+ rows\) written to /);
    const dumped = await servicectl(proc.configFile, 'dump', dump());
    expect(dumped.code, dumped.stderr).to.equal(0);
    expect(await users()).to.include.members(['alice', 'bob', 'carol', 'dave']);
  });

  it('restore serves the backup from both workers: credentials the other worker verified are dropped, its session of an account that is gone ends, the others go on', async () => {
    const backedUp = await users();
    await register('erin');
    expect(await basicStatuses('erin')).to.deep.equal([200, 200, 200, 200]);
    const alice = await logins.client(2, 'alice');
    const erin = await logins.client(2, 'erin');
    const erinErrors = streamErrors(erin);

    const restored = await servicectl(proc.configFile, 'restore', backup());
    expect(restored.code, restored.stderr).to.equal(0);

    expect(await users()).to.deep.equal(backedUp);
    // erin is not in the backup: worker 2 ended her session, and neither worker accepts her password any more.
    await waitFor(() => erinErrors.length > 0);
    expect(erinErrors).to.include('not-authorized');
    expect(await basicStatuses('erin')).to.deep.equal([401, 401, 401, 401]);
    // alice is: her session on worker 2 goes on, served from the restored data.
    const roster = await alice.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
    expect(roster.getChild('query', 'jabber:iq:roster')).to.not.equal(undefined);
    expect(await basicStatuses('alice')).to.deep.equal([200, 200, 200, 200]);
  });

  it('load serves the dump from both workers', async () => {
    const dumped = await users();
    await register('frank');
    expect(await basicStatuses('frank')).to.deep.equal([200, 200, 200, 200]);
    const loaded = await servicectl(proc.configFile, 'load', dump());
    expect(loaded.code, loaded.stderr).to.equal(0);
    expect(await users()).to.deep.equal(dumped);
    expect(await basicStatuses('frank')).to.deep.equal([401, 401, 401, 401]);
  });

  it('install_fallback: worker 1 restores it when the server starts again, before the other worker opens the files', async () => {
    const backedUp = await users();
    const installed = await servicectl(proc.configFile, 'install_fallback', backup());
    expect(installed.code, installed.stderr).to.equal(0);
    expect(installed.stdout).to.include('it is restored at the next start of the server (servicectl stop, then start)');
    await register('gina');
    expect(await users()).to.include('gina');

    await stopAll(...logins.clients.splice(0));
    const stopped = await servicectl(proc.configFile, 'stop');
    expect(stopped.code, stopped.stderr).to.equal(0);
    await proc.exited;
    proc = await respawnServer(proc);
    const started = await servicectl(proc.configFile, 'started');
    expect(started.code, started.stderr).to.equal(0);

    expect(proc.output()).to.include('fallback restored at start');
    expect(await users()).to.deep.equal(backedUp);
    await stat(join(proc.dir, 'data', 'fallback.bak')).then(() => expect.fail('the fallback is still installed'), () => undefined);
  });
});
