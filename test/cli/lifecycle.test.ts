/**
 * servicectl start / status / stop / restart on a daemon, what works with the server stopped, and the
 * "console commands" group of api_permissions.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, openConfig, spawnServer } from '../support/process.js';
import { servicectl } from '../support/cli.js';
import type { RawConfig } from '../support/server.js';

async function configDir(config: (port: number) => RawConfig): Promise<{ dir: string; file: string; port: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'service-ctl-'));
  const port = await freePort();
  const file = join(dir, 'service.yml');
  await writeFile(file, stringify({ data_dir: join(dir, 'data'), ...config(port) }));
  return { dir, file, port };
}

describe('servicectl lifecycle', () => {
  describe('a daemon', () => {
    let dir: string;
    let file: string;
    let port: number;
    before(async () => ({ dir, file, port } = await configDir(openConfig)));
    after(async () => {
      await servicectl(file, 'stop');
      await rm(dir, { recursive: true, force: true });
    });

    it('status is 3 and says so before start', async () => {
      const res = await servicectl(file, 'status');
      expect(res.code).to.equal(3);
      expect(res.stdout).to.match(/service is not running/);
    });

    it('a command says the server is not running, with exit 3 and what to do', async () => {
      const res = await servicectl(file, 'registered_users', 'localhost');
      expect(res.code).to.equal(3);
      expect(res.stderr).to.match(/^servicectl: server not running \(.*\): start it with servicectl --config .*service\.yml start \(or foreground\)\n$/);
    });

    it('help works with the server stopped', async () => {
      const res = await servicectl(file, 'help', 'registered_users');
      expect(res.code).to.equal(0);
      expect(res.stdout).to.include('servicectl registered_users <host>');
    });

    it('print_sql_schema works with the server stopped', async () => {
      const res = await servicectl(file, 'print_sql_schema', 'mysql', '10.11', '1');
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.match(/create table `users`/);
      // The OAuth server's tables are the kernel's too: a database made from this text serves tokens.
      expect(res.stdout).to.match(/create table `oauth_tokens`/);
      expect(res.stdout).to.match(/insert into `schema_migrations` .*'service_oauth'/);
    });

    it('starts in the background with a pid file, and status is 0', async () => {
      const started = await servicectl(file, 'start');
      expect(started.code, started.stderr).to.equal(0);
      expect(started.stdout).to.match(/^service started \(pid \d+\)/);
      const pid = Number((await readFile(join(dir, 'data', 'service.pid'), 'utf8')).trim());
      // The data directory holds the database and the control socket; the log is the operator's too.
      expect((await stat(join(dir, 'data'))).mode & 0o777).to.equal(0o700);
      expect((await stat(join(dir, 'data', 'service.log'))).mode & 0o777).to.equal(0o600);
      expect(started.stdout).to.include(`pid ${pid}`);
      const status = await servicectl(file, 'status');
      expect(status.code).to.equal(0);
      expect(status.stdout).to.match(/is started with status: started/);
      const again = await servicectl(file, 'start');
      expect(again.code).to.equal(1);
      expect(again.stderr).to.match(/already running/);
    });

    it('restarts in place', async () => {
      await servicectl(file, 'register', 'kim', 'localhost', 'pw');
      const res = await servicectl(file, 'restart');
      expect(res.code, res.stderr).to.equal(0);
      expect((await servicectl(file, 'registered_users', 'localhost')).stdout).to.equal('kim\n');
    });

    it('refuses a second server on the same data directory before it starts anything', async () => {
      const logBefore = await readFile(join(dir, 'data', 'service.log'), 'utf8');
      const second = await servicectl(file, 'foreground');
      expect(second.code).to.equal(1);
      expect(second.stderr).to.match(/^servicectl: a server already runs with data_dir .*data \(it answers on /);
      expect((await servicectl(file, 'status')).code).to.equal(0);
      await new Promise((r) => setTimeout(r, 200));
      const logAfter = await readFile(join(dir, 'data', 'service.log'), 'utf8');
      // The running server's log goes on (the status call is in it), with no stop or start from the refused one.
      expect(logAfter.slice(logBefore.length)).to.match(/"command":"status"/).and.not.match(/service stopped|starting/);
    });

    it('says a port another program holds is a configuration problem (exit 78)', async () => {
      const other = await configDir(() => openConfig(port));
      try {
        const res = await servicectl(other.file, 'foreground');
        expect(res.code).to.equal(78);
        expect(res.stderr).to.match(/^servicectl: cannot start: .*EADDRINUSE|address already in use/);
      } finally {
        await rm(other.dir, { recursive: true, force: true });
      }
    });

    it('refuses to restart with a configuration file that would not start, and keeps running', async () => {
      const good = await readFile(file, 'utf8');
      await writeFile(file, `${good}\nloglevle: info\n`);
      try {
        const res = await servicectl(file, 'restart');
        expect(res.code).to.equal(78);
        expect(res.stderr).to.match(/the server was not restarted: .*loglevle.*did you mean 'loglevel'/s);
      } finally {
        await writeFile(file, good);
      }
      const status = await servicectl(file, 'status');
      expect(status.code).to.equal(0);
      expect((await servicectl(file, 'registered_users', 'localhost')).stdout).to.equal('kim\n');
    });

    it('still reaches the running server when the file is not valid YAML, and says where it breaks', async () => {
      const good = await readFile(file, 'utf8');
      await writeFile(file, `${good}\nbroken:\n\t- tab\n`);
      try {
        const status = await servicectl(file, 'status');
        expect(status.code, status.stderr).to.equal(0);
        expect(status.stderr).to.match(/^servicectl: warning: .*service\.yml is not valid YAML \(line \d+, column \d+: .*\); using data_dir /);
        const reload = await servicectl(file, 'reload_config');
        expect(reload.code).to.not.equal(0);
        expect(reload.stderr).to.match(/not reloaded/);
      } finally {
        await writeFile(file, good);
      }
      expect((await servicectl(file, 'registered_users', 'localhost')).stdout).to.equal('kim\n');
    });

    it('stops, waiting for the process to exit and removing the pid file', async () => {
      const res = await servicectl(file, 'stop');
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.match(/^service stopped/);
      expect(existsSync(join(dir, 'data', 'service.pid'))).to.equal(false);
      expect((await servicectl(file, 'status')).code).to.equal(3);
      expect((await servicectl(file, 'stop')).code).to.equal(3);
    });

    it('mnesia_change renames the node identity with the server stopped', async () => {
      const config = { data_dir: join(dir, 'data'), ...openConfig(await freePort()), node_name: 'service@newhost' };
      await writeFile(file, stringify(config));
      const res = await servicectl(file, 'mnesia_change', 'service@localhost');
      expect(res.code, res.stderr).to.equal(0);
      expect(res.stdout).to.equal('Stored data of node service@localhost now belongs to service@newhost.\n');
      const again = await servicectl(file, 'mnesia_change', 'service@localhost');
      expect(again.code).to.equal(1);
      expect(again.stderr).to.match(/no stored data of node 'service@localhost'; stored nodes: service@newhost/);
    });
  });

  describe('api_permissions for servicectl', () => {
    it('an operator-defined "console commands" group replaces the implicit one', async () => {
      const proc = await spawnServer((port) => ({
        ...openConfig(port),
        api_permissions: {
          'console commands': { from: 'service_ctl', who: 'all', what: ['status', 'registered_vhosts'] },
          'loopback admin': { who: { acl: 'loopback' }, what: '*' },
        },
      }));
      try {
        expect((await servicectl(proc.configFile, 'registered_vhosts')).code).to.equal(0);
        const denied = await servicectl(proc.configFile, 'register', 'x', 'localhost', 'pw');
        expect(denied.code).to.equal(5);
        expect(denied.stderr).to.match(/not allowed: .* run register through service_ctl: the "console commands" group of api_permissions decides what servicectl may run/);
      } finally {
        await proc.cleanup();
      }
    });
  });
});
