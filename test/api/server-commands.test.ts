/**
 * Server commands: status, registered_vhosts, dump_config, gc, clear_cache, convert_to_scram, and the
 * lifecycle ones (stop, restart, halt, Ctrl-C) on a real process.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { request, baseConfig, TestServer } from '../support/server.js';
import { openConfig, spawnServer } from '../support/process.js';

const ADMIN = 'admin@localhost:adminpass';

describe('server commands', () => {
  describe('in process', () => {
    let t: TestServer;
    before(async () => {
      const config = baseConfig();
      config.auth_password_format = 'plain';
      config.sql_password = 'do-not-dump-me';
      t = await TestServer.start(config);
      await t.bootstrapAdmin();
    });
    after(() => t.stop());

    it('lists the vhosts, sorted', async () => {
      expect((await t.api('registered_vhosts', {}, { basic: ADMIN })).body).to.deep.equal(['example.com', 'localhost']);
    });

    it('dumps the running configuration with defaults, masking secrets', async () => {
      const out = join(t.dir, 'running.yml');
      expect((await t.api('dump_config', { out }, { basic: ADMIN })).body).to.equal(0);
      const text = await readFile(out, 'utf8');
      const dumped = parse(text);
      expect(dumped.hosts).to.deep.equal(['localhost', 'example.com']);
      expect(dumped.auth_password_format).to.equal('plain');
      expect(dumped.oauth_expire).to.equal(3600, 'defaults included');
      expect(dumped.modules).to.deep.equal({ mod_http_api: {} });
      expect(dumped.listen[0].max_body_size).to.equal(1048576);
      expect(dumped.api_permissions['admin access']).to.deep.equal({ who: { acl: 'admin' }, what: '*' });
      expect(dumped.sql_password).to.equal('********');
      expect(text).to.not.include('do-not-dump-me');
    });

    it('says why dump_config cannot write', async () => {
      const res = await t.api('dump_config', { out: '/nonexistent-dir/x.yml' }, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.equal('cannot write /nonexistent-dir/x.yml: ENOENT (the directory does not exist)');
    });

    it('runs gc and clear_cache', async () => {
      expect((await t.api('gc', {}, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('clear_cache', {}, { basic: ADMIN })).body).to.equal(0);
      // Credentials are verified again after the cache is gone.
      expect((await t.api('status', {}, { basic: ADMIN })).status).to.equal(200);
    });

    it('converts plain passwords to SCRAM, and they keep working', async () => {
      await t.register('ivan', 'localhost', 'ivan-pw', ADMIN);
      const db = t.server.services.storage.db('sql');
      expect((await db('users').where({ username: 'ivan' }).first()).password).to.equal('ivan-pw');
      expect((await t.api('convert_to_scram', { host: 'localhost' }, { basic: ADMIN })).body).to.equal(0);
      const row = await db('users').where({ username: 'ivan' }).first();
      expect(row.password).to.equal(null);
      expect(row.scram_sha256_stored).to.be.a('string');
      await t.api('clear_cache', {}, { basic: ADMIN });
      expect((await t.api('status', {}, { basic: 'ivan@localhost:ivan-pw' })).status).to.equal(200);
      expect((await t.api('status', {}, { basic: 'ivan@localhost:wrong' })).status).to.equal(401);
    });

    it('refuses convert_to_scram for a host it does not serve', async () => {
      const res = await t.api('convert_to_scram', { host: 'elsewhere.org' }, { basic: ADMIN });
      expect(res.status).to.equal(400);
      expect(res.body.message).to.match(/unknown virtual host 'elsewhere\.org'/);
    });

    it('restarts on the same port, keeping data', async () => {
      const port = t.port;
      expect((await t.api('restart', {}, { basic: ADMIN })).body).to.equal(0);
      let res;
      for (let i = 0; i < 50; i++) {
        await new Promise((r) => setTimeout(r, 100));
        res = await request(`http://127.0.0.1:${port}/api/registered_users`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(ADMIN).toString('base64')}` },
          body: '{"host":"localhost"}',
        }).catch(() => undefined);
        if (res?.status === 200) break;
      }
      expect(res?.body).to.include('ivan');
      expect(t.logged((l) => l.msg === 'restarting')).to.have.length(1);
    });
  });

  describe('as a process', () => {
    it('stops gracefully on the stop command, exiting 0', async () => {
      const proc = await spawnServer((port) => openConfig(port));
      try {
        const res = await request(`http://127.0.0.1:${proc.port}/api/stop`, { method: 'POST', body: '{}' });
        expect(res.body).to.equal(0);
        expect(await proc.exited).to.equal(0);
        expect(proc.output()).to.match(/service stopped/);
      } finally {
        await proc.cleanup();
      }
    });

    it('halts at once with exit status 1', async () => {
      const proc = await spawnServer((port) => openConfig(port));
      try {
        const res = await request(`http://127.0.0.1:${proc.port}/api/halt`, { method: 'POST', body: '{}' });
        expect(res.body).to.equal(0);
        expect(await proc.exited).to.equal(1);
        // The server's log is in the output, without the line of a graceful stop.
        expect(proc.output()).to.match(/listening for HTTP/).and.not.match(/service stopped/);
      } finally {
        await proc.cleanup();
      }
    });

    it('stops cleanly on Ctrl-C (SIGINT), exiting 0', async () => {
      const proc = await spawnServer((port) => openConfig(port));
      try {
        proc.child.kill('SIGINT');
        expect(await proc.exited).to.equal(0);
        expect(proc.output()).to.match(/received SIGINT, stopping/);
        expect(proc.output()).to.match(/service stopped/);
      } finally {
        await proc.cleanup();
      }
    });

    it('npm start -- --config FILE runs that configuration in the foreground', async () => {
      const proc = await spawnServer(
        (port) => openConfig(port),
        (file) => ['npm', 'start', '--silent', '--', '--config', file],
      );
      try {
        // spawnServer returned: the server answers on the port of FILE. Ctrl-C signals the terminal's process group.
        process.kill(-proc.child.pid!, 'SIGINT');
        await proc.exited;
        expect(proc.output()).to.match(/service stopped/);
      } finally {
        await proc.cleanup();
      }
    });

    it('refuses to start with an invalid configuration, saying why', async () => {
      let failed: Error | undefined;
      try {
        const proc = await spawnServer((port) => ({ ...openConfig(port), hsots: ['x'] }));
        await proc.cleanup();
      } catch (err) {
        failed = err as Error;
      }
      expect(failed?.message).to.match(/hsots: unknown option: did you mean 'hosts'\?/);
    });
  });
});
