/**
 * mod_fail2ban under workers (`workers: 2`, one `servicectl foreground` process): each HTTP connection may
 * reach either worker, yet password guessing over HTTP Basic bans the address on both, and `unban_ip` through
 * servicectl (answered by one worker) frees it on both.
 */
import { expect } from 'chai';
import { servicectl } from '../support/cli.js';
import { openConfig, spawnServer, type ServerProcess } from '../support/process.js';
import { request } from '../support/server.js';
import { basicFrom } from './http-basic.js';

const MAX_FAILURES = 4;

describe('mod_fail2ban under workers', function () {
  this.timeout(90_000);
  let proc: ServerProcess;

  before(async () => {
    proc = await spawnServer((port) => ({
      ...openConfig(port),
      workers: 2,
      api_permissions: {
        'loopback admin': { who: { acl: 'loopback' }, what: '*' },
        users: { who: 'all', from: ['mod_http_api'], what: ['user_resources'] },
      },
      modules: { mod_http_api: {}, mod_fail2ban: { c2s_max_auth_failures: MAX_FAILURES, c2s_auth_ban_lifetime: 600 } },
    }));
    // /api/status answers once one worker serves; `servicectl started` waits for both.
    const started = await servicectl(proc.configFile, 'started');
    expect(started.code, started.stderr).to.equal(0);
    for (const user of ['alice', 'bob', 'carol', 'dave', 'erin']) {
      const res = await request(`http://127.0.0.1:${proc.port}/api/register`, { method: 'POST', body: JSON.stringify({ user, host: 'localhost', password: `${user}-pw` }) });
      expect(res.status, res.text).to.equal(200);
    }
  });
  after(() => proc?.cleanup());

  it('bans on both workers, and unban_ip frees the address on both', async () => {
    const from = '127.0.0.40';
    for (const user of ['alice', 'bob', 'carol', 'dave']) expect((await basicFrom(from, proc.port, user, 'password123')).status, `guess on ${user}`).to.equal(401);
    // Each attempt is a new connection; consecutive ones go to either worker, so four in a row meet both.
    for (let i = 0; i < 4; i++) expect((await basicFrom(from, proc.port, 'erin', 'erin-pw')).status, `attempt ${i + 1} after the ban`).to.equal(403);
    const answer = await servicectl(proc.configFile, 'unban_ip', '127.0.0.40/31');
    expect(answer.code, answer.stderr).to.equal(0);
    expect(answer.stdout.trim()).to.equal('1');
    for (let i = 0; i < 4; i++) expect((await basicFrom(from, proc.port, 'erin', 'erin-pw')).status, `attempt ${i + 1} after unban_ip`).to.equal(200);
  });
});
