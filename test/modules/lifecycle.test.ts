/**
 * Modules come and go with the configuration: their commands, hooks and tables appear when they start
 * and vanish when they stop; options reload in place; a broken module stops the boot with its name and
 * the reason.
 */
import { expect } from 'chai';
import { baseConfig, TestServer, type RawConfig } from '../support/server.js';

const ADMIN = 'admin@localhost:adminpass';

function withModules(modules: Record<string, unknown>): RawConfig {
  return { ...baseConfig(), modules: { mod_http_api: {}, ...modules } };
}

async function startFailure(config: RawConfig, plugins: string[]): Promise<Error> {
  try {
    const t = await TestServer.start(config, { plugins });
    await t.stop();
  } catch (err) {
    return err as Error;
  }
  throw new Error('the server started although it should not have');
}

describe('modules', () => {
  describe('started, stopped and started again', () => {
    let t: TestServer;
    before(async () => {
      t = await TestServer.start(withModules({ mod_fixture: {} }), { plugins: ['mod_fixture', 'mod_fixture_dep', 'mod_fixture_consumer', 'mod_fixture_optional'] });
      await t.bootstrapAdmin();
    });
    after(() => t.stop());

    it('registers the commands of an enabled module', async () => {
      expect((await t.api('fixture_greet', {}, { basic: ADMIN })).body).to.equal('hello');
    });

    it('removes its commands when reload_config drops the module', async () => {
      await t.writeConfig(withModules({}));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      const res = await t.api('fixture_greet', {}, { basic: ADMIN });
      expect(res.status).to.equal(404);
      expect(res.body.message).to.match(/provided by module mod_fixture, which is not enabled/);
      expect(t.logged((l) => l.msg === 'module mod_fixture stopped')).to.have.length(1);
    });

    it('brings them back when the module is enabled again', async () => {
      await t.writeConfig(withModules({ mod_fixture: { greeting: 'welcome back' } }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('fixture_greet', {}, { basic: ADMIN })).body).to.equal('welcome back');
    });

    it('reloads changed options in place when the module supports it', async () => {
      await t.writeConfig(withModules({ mod_fixture: { greeting: 'bonjour' } }));
      await t.api('reload_config', {}, { basic: ADMIN });
      expect((await t.api('fixture_greet', {}, { basic: ADMIN })).body).to.equal('bonjour');
      expect(t.logged((l) => l.msg === 'module mod_fixture reloaded with new options')).to.have.length(1);
    });

    it('starts dependencies first and gives a dependent the service it consumes', async () => {
      await t.writeConfig(withModules({ mod_fixture_dep: {}, mod_fixture: { greeting: 'hi' } }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('fixture_dep_greet', {}, { basic: ADMIN })).body).to.equal('dep says hi');
    });

    it('restarts a dependent when its dependency restarts, and refuses to drop a needed dependency', async () => {
      await t.writeConfig(withModules({ mod_fixture_dep: {} }));
      const res = await t.api('reload_config', {}, { basic: ADMIN });
      expect(res.status).to.equal(422);
      expect(res.body.message).to.match(/MODULE_DEPENDENCY_MISSING: module mod_fixture_dep: it depends on mod_fixture, which is not enabled/);
      // Nothing changed.
      expect((await t.api('fixture_dep_greet', {}, { basic: ADMIN })).body).to.equal('dep says hi');
    });

    it('starts the provider of a consumed service first, and hands the consumer its service', async () => {
      await t.writeConfig(withModules({ mod_fixture_consumer: {}, mod_fixture: { greeting: 'served' } }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('fixture_consumer_greet', {}, { basic: ADMIN })).body).to.equal('served');
      const started = t.logs.filter((l) => /^module mod_fixture(_consumer)? \S+ started$/.test(l.msg)).map((l) => l.module);
      expect(started.lastIndexOf('mod_fixture')).to.be.below(started.lastIndexOf('mod_fixture_consumer'));
    });

    it('lets every module take part in removing an account (remove_user hook)', async () => {
      await t.register('gina', 'localhost', 'pw');
      expect((await t.api('fixture_note_add', { user: 'gina', host: 'localhost', note: 'x' }, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('fixture_note_count', { user: 'gina', host: 'localhost' }, { basic: ADMIN })).body).to.equal(1);
      expect((await t.api('unregister', { user: 'gina', host: 'localhost' }, { basic: ADMIN })).body).to.equal('User gina@localhost unregistered');
      expect((await t.api('fixture_note_count', { user: 'gina', host: 'localhost' }, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('unregister', { user: 'gina', host: 'localhost' }, { basic: ADMIN })).status).to.equal(404);
    });

    it('keeps a module\'s tables (and rows) across a stop and a start', async () => {
      await t.register('hugo', 'localhost', 'pw');
      await t.api('fixture_note_add', { user: 'hugo', host: 'localhost', note: 'kept' }, { basic: ADMIN });
      await t.writeConfig(withModules({}));
      await t.api('reload_config', {}, { basic: ADMIN });
      await t.writeConfig(withModules({ mod_fixture: {} }));
      await t.api('reload_config', {}, { basic: ADMIN });
      expect((await t.api('fixture_note_count', { user: 'hugo', host: 'localhost' }, { basic: ADMIN })).body).to.equal(1);
    });

    it('restarts an optional consumer when the provider of its service stops, and finds no service then', async () => {
      await t.writeConfig(withModules({ mod_fixture_optional: {}, mod_fixture: { greeting: 'present' } }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect((await t.api('fixture_optional_greet', {}, { basic: ADMIN })).body).to.equal('present');
      const restarts = () => t.logged((l) => l.msg === 'module mod_fixture_optional stopped').length;
      const before = restarts();
      await t.writeConfig(withModules({ mod_fixture_optional: {} }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect(restarts()).to.equal(before + 1);
      expect((await t.api('fixture_optional_greet', {}, { basic: ADMIN })).body).to.equal('nobody greets');
    });

    it('restarts an optional consumer when the provider of its service arrives: what it set up at start was without it', async () => {
      const restarts = () => t.logged((l) => l.msg === 'module mod_fixture_optional stopped').length;
      const before = restarts();
      await t.writeConfig(withModules({ mod_fixture_optional: {}, mod_fixture: { greeting: 'back again' } }));
      expect((await t.api('reload_config', {}, { basic: ADMIN })).body).to.equal(0);
      expect(restarts()).to.equal(before + 1);
      expect((await t.api('fixture_optional_greet', {}, { basic: ADMIN })).body).to.equal('back again');
    });
  });

  describe('a boot that cannot succeed', () => {
    it('names the module whose start fails, and the reason', async () => {
      const err = await startFailure(withModules({ mod_fixture_broken: {} }), ['mod_fixture_broken']);
      expect(err.message).to.equal('MODULE_START_FAILED: module mod_fixture_broken: start failed: cannot reach the fixture backend');
    });

    it('names a missing dependency', async () => {
      const err = await startFailure(withModules({ mod_fixture_needs: {} }), ['mod_fixture_needs']);
      expect(err.message).to.match(/MODULE_DEPENDENCY_MISSING: module mod_fixture_needs: it depends on mod_fixture, which is not enabled/);
    });

    it('names a dependency of a version outside the range asked', async () => {
      const err = await startFailure(withModules({ mod_fixture: {}, mod_fixture_picky: {} }), ['mod_fixture', 'mod_fixture_picky']);
      expect(err.message).to.match(/MODULE_DEPENDENCY_VERSION: module mod_fixture_picky: it needs mod_fixture \^2\.0\.0, but mod_fixture is 1\.0\.0/);
    });

    it('names the provider of a consumed service that is not enabled', async () => {
      const err = await startFailure(withModules({ mod_fixture_consumer: {} }), ['mod_fixture', 'mod_fixture_consumer']);
      expect(err.message).to.match(/MODULE_DEPENDENCY_MISSING: module mod_fixture_consumer: it uses the service mod_fixture\.greeting of mod_fixture, which is not enabled/);
    });

    it('names a plugin API version mismatch', async () => {
      const err = await startFailure(withModules({ mod_fixture_future: {} }), ['mod_fixture_future']);
      expect(err.message).to.match(/modules\.mod_fixture_future: MODULE_API_MISMATCH: module mod_fixture_future: version 3\.0\.0 was built for plugin API \^9\.0\.0, but this server's plugin API is 0\.1\.0/);
    });

    it('validates module options against the module\'s schema', async () => {
      const err = await startFailure(withModules({ mod_fixture: { greting: 'x', limit: 0 } }), ['mod_fixture']);
      expect(err.message).to.match(/modules\.mod_fixture\.greting: unknown option: did you mean 'greeting'\?/);
      expect(err.message).to.match(/modules\.mod_fixture\.limit: expected an integer of at least 1, got 0/);
    });
  });
});
