/**
 * The embedded database's commands under workers (`workers: 2`, one `servicectl foreground` process): backup
 * and dump work (worker 1 answers servicectl and copies from its own connection while the other worker keeps
 * writing), while restore, load and install_fallback refuse with an error that says what to do instead — the
 * other worker would keep stale caches — and change nothing.
 */
import { join } from 'node:path';
import { stat } from 'node:fs/promises';
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { openConfig, spawnServer, type ServerProcess } from '../support/process.js';
import { request } from '../support/server.js';

describe('embedded database commands under workers', function () {
  this.timeout(90_000);
  let proc: ServerProcess;
  const register = async (user: string) => {
    const res = await request(`http://127.0.0.1:${proc.port}/api/register`, { method: 'POST', body: JSON.stringify({ user, host: 'localhost', password: `${user}-pw` }) });
    expect(res.status, res.text).to.equal(200);
  };
  const users = async () => (await request(`http://127.0.0.1:${proc.port}/api/registered_users`, { method: 'POST', body: '{"host":"localhost"}' })).body as string[];

  before(async () => {
    proc = await spawnServer((port) => ({ ...openConfig(port), workers: 2, api_permissions: { 'loopback admin': { who: { acl: 'loopback' }, what: '*' } }, modules: { mod_http_api: {} } }));
    const started = await servicectl(proc.configFile, 'started');
    expect(started.code, started.stderr).to.equal(0);
    for (const user of ['alice', 'bob']) await register(user);
  });
  after(() => proc?.cleanup());

  it('backup and dump work; restore, load and install_fallback refuse, changing nothing', async () => {
    const backup = join(proc.dir, 'w.backup');
    const dump = join(proc.dir, 'w.dump');
    const made = await Promise.all([servicectl(proc.configFile, 'backup', backup), register('carol'), register('dave')]);
    expect(made[0].code, made[0].stderr).to.equal(0);
    expect(made[0].stdout).to.match(/^Backup of sql \(\d+ tables, \d+ rows\) written to /);
    const dumped = await servicectl(proc.configFile, 'dump', dump);
    expect(dumped.code, dumped.stderr).to.equal(0);
    await register('erin');
    const before = (await users()).sort();
    expect(before).to.include.members(['alice', 'bob', 'carol', 'dave', 'erin']);
    for (const [command, file] of [['restore', backup], ['install_fallback', backup], ['load', dump]] as const) {
      const res = await servicectl(proc.configFile, command, file);
      expect(res.code, `${command}: ${res.stdout}`).to.not.equal(0);
      expect(res.stderr).to.include(`${command} is not available under workers (2 processes hold the database open and would keep stale caches)`);
    }
    expect((await users()).sort()).to.deep.equal(before);
    await stat(join(proc.dir, 'data', 'fallback.bak')).then(() => expect.fail('a fallback was installed'), () => undefined);
  });
});
