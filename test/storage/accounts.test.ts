import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Knex } from 'knex';
import { AccountService, type AccountSettings } from '../../kernel/src/accounts/accounts.js';
import { CredentialCache, type CredentialCacheSettings } from '../../kernel/src/accounts/credential-cache.js';
import { ACCOUNT_MIGRATIONS, ACCOUNTS_MIGRATION_OWNER, USERS_TABLE } from '../../kernel/src/accounts/migrations.js';
import { SCRAM_HASHES, deriveScramKeys } from '../../kernel/src/accounts/scram.js';
import { CommandError } from '@service/plugin-api';
import { HookBus } from '../../kernel/src/hooks/hooks.js';
import { createLogger } from '../../kernel/src/log/logger.js';
import { EMBEDDED_DB_FILE, Storage, type SqlSettings, type StorageSettings } from '../../kernel/src/storage/database.js';
import { MIGRATIONS_TABLE, renderMigrations } from '../../kernel/src/storage/migrations.js';
import { type Migration } from '@service/plugin-api';
import { testDatabases } from '../support/databases.js';
import { rejectionOf } from '../support/rejection.js';

const logger = createLogger({ level: 'none' });

const rejection = (promise: Promise<unknown>) => rejectionOf(promise, CommandError);
const failure = (promise: Promise<unknown>) => rejectionOf(promise);

function table(name: string): Migration {
  return { id: `create_${name}`, up: (k) => k.schema.createTable(name, (t) => t.string('x', 10)) };
}

/**
 * Another process that migrates the same database (a second process, not a second pool: SQLite's
 * synchronous driver would block this event loop while it waits for the other connection's lock). It
 * opens its storage first and starts migrating on `go()`, which returns once it has started, so the two
 * overlap.
 */
async function startCompetingMigrator(settings: StorageSettings, owner: string, names: readonly string[]) {
  const storageModule = new URL('../../kernel/src/storage/database.ts', import.meta.url).href;
  const code = `
    import { Storage } from ${JSON.stringify(storageModule)};
    import { createInterface } from 'node:readline';
    const [settings, owner, names] = JSON.parse(process.argv[1]);
    const logger = { info() {}, debug() {}, warn() {}, error() {} };
    const storage = await Storage.open(settings, logger);
    const migrations = names.map((name) => ({ id: 'create_' + name, up: (k) => k.schema.createTable(name, (t) => t.string('x', 10)) }));
    process.stdout.write('ready\\n');
    await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
    try {
      const running = storage.migrate(owner, migrations);
      process.stdout.write('started\\n');
      process.stdout.write(JSON.stringify(await running) + '\\n');
    } finally {
      await storage.close();
      process.stdin.destroy();
    }
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, JSON.stringify([settings, owner, names])], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const nextLine = async () => {
    const line = await lines.next();
    if (line.done) throw new Error(`competing migrator exited (${await exited}): ${stderr}`);
    return line.value;
  };
  expect(await nextLine()).to.equal('ready');
  return {
    async go(): Promise<{ applied: Promise<string[]> }> {
      child.stdin.write('go\n');
      expect(await nextLine()).to.equal('started');
      const applied = (async () => {
        const result = JSON.parse(await nextLine()) as string[];
        expect(await exited, stderr).to.equal(0);
        return result;
      })();
      return { applied };
    },
  };
}

describe('credential cache', () => {
  let now: number;
  let settings: CredentialCacheSettings;
  let cache: CredentialCache;

  beforeEach(() => {
    now = 1_000_000;
    settings = { enabled: true, size: 3, lifeTimeSeconds: 10 };
    cache = new CredentialCache(() => settings, () => now);
  });

  it('remembers a verified password for its lifetime only', () => {
    cache.remember('alice', 'localhost', 'pw', cache.epoch());
    expect(cache.isVerified('alice', 'localhost', 'pw')).to.equal(true);
    expect(cache.isVerified('alice', 'localhost', 'other')).to.equal(false);
    expect(cache.isVerified('bob', 'localhost', 'pw')).to.equal(false);
    now += 9_999;
    expect(cache.isVerified('alice', 'localhost', 'pw')).to.equal(true);
    now += 1;
    expect(cache.isVerified('alice', 'localhost', 'pw')).to.equal(false);
    expect(cache.size).to.equal(0);
  });

  it('keeps the most recently used entries within its size, and shrinks on a reload', () => {
    for (const user of ['a', 'b', 'c']) cache.remember(user, 'h', 'pw', cache.epoch());
    // Recency counts to the second (a hit on every request must not reorder the map every time).
    now += 1000;
    expect(cache.isVerified('a', 'h', 'pw')).to.equal(true); // now the most recent
    cache.remember('d', 'h', 'pw', cache.epoch());
    expect(cache.size).to.equal(3);
    expect(cache.isVerified('b', 'h', 'pw')).to.equal(false);
    expect(['a', 'c', 'd'].map((u) => cache.isVerified(u, 'h', 'pw'))).to.deep.equal([true, true, true]);
    settings = { ...settings, size: 1 };
    cache.remember('e', 'h', 'pw', cache.epoch());
    expect(cache.size).to.equal(1);
    expect(cache.isVerified('e', 'h', 'pw')).to.equal(true);
  });

  it('forgets an account on invalidate, and refuses a result checked before it', () => {
    cache.remember('alice', 'h', 'pw', cache.epoch());
    cache.remember('bob', 'h', 'pw', cache.epoch());
    const before = cache.epoch();
    cache.invalidate('alice', 'h');
    expect(cache.isVerified('alice', 'h', 'pw')).to.equal(false);
    expect(cache.isVerified('bob', 'h', 'pw')).to.equal(true);
    // A check that read the old credentials before the change must not repopulate the cache.
    cache.remember('alice', 'h', 'old', before);
    expect(cache.isVerified('alice', 'h', 'old')).to.equal(false);
    cache.clear();
    expect(cache.size).to.equal(0);
  });

  it('does nothing while disabled', () => {
    settings = { ...settings, enabled: false };
    cache.remember('alice', 'h', 'pw', cache.epoch());
    expect(cache.size).to.equal(0);
    expect(cache.isVerified('alice', 'h', 'pw')).to.equal(false);
  });
});

describe('storage', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = path.join(await mkdtemp(path.join(tmpdir(), 'svc-storage-')), 'data');
  });

  afterEach(async () => {
    await rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  const sqliteSettings = (database: string): SqlSettings => ({
    type: 'sqlite',
    server: '',
    database,
    username: '',
    password: '',
    poolSize: 1,
  });

  it('creates a relative SQLite file under a private data directory, with the pragmas set', async () => {
    const storage = await Storage.open({ sql: sqliteSettings('main.db'), dataDir, defaultDb: 'sql' }, logger);
    try {
      expect((await stat(dataDir)).mode & 0o777).to.equal(0o700);
      expect((await stat(path.join(dataDir, 'main.db'))).isFile()).to.equal(true);
      // It holds password keys: only the server's user reads it, and the WAL files SQLite makes take its mode.
      expect((await stat(path.join(dataDir, 'main.db'))).mode & 0o777).to.equal(0o600);
      const db = storage.db();
      expect(storage.sqlType).to.equal('sqlite');
      const pragma = async (name: string) => Object.values((await db.raw(`pragma ${name}`))[0] as object)[0];
      expect(await pragma('journal_mode')).to.equal('wal');
      expect(await pragma('foreign_keys')).to.equal(1);
      expect(await pragma('busy_timeout')).to.equal(5000);
      await db.raw('create table if not exists mode_probe (x integer)');
      expect((await stat(path.join(dataDir, 'main.db-wal'))).mode & 0o777).to.equal(0o600);
      expect(await pragma('synchronous')).to.equal(1); // NORMAL
    } finally {
      await storage.close();
    }
  });

  it('opens the embedded store lazily, and shares it when the SQL file is the same one', async () => {
    const separate = await Storage.open({ sql: sqliteSettings('main.db'), dataDir, defaultDb: 'mnesia' }, logger);
    try {
      const embeddedPath = path.join(dataDir, EMBEDDED_DB_FILE);
      expect(await stat(embeddedPath).catch(() => undefined)).to.equal(undefined);
      const embedded = separate.db();
      expect(embedded).to.equal(separate.db('mnesia'));
      expect(embedded).to.not.equal(separate.db('sql'));
      await embedded.raw('select 1');
      expect((await stat(embeddedPath)).isFile()).to.equal(true);
    } finally {
      await separate.close();
    }
    const shared = await Storage.open({ sql: sqliteSettings(path.join(dataDir, EMBEDDED_DB_FILE)), dataDir, defaultDb: 'sql' }, logger);
    try {
      expect(shared.db('mnesia')).to.equal(shared.db('sql'));
    } finally {
      await shared.close();
    }
    expect(() => shared.db()).to.throw('storage is closed');
  });

  it('names the target and the driver reason when it cannot connect, never the password', async () => {
    const sql: SqlSettings = {
      type: 'mysql',
      server: '127.0.0.1',
      port: 1, // nothing listens there
      database: 'nope',
      username: 'someone',
      password: 'hunter2-secret',
      poolSize: 2,
    };
    const err = await failure(Storage.open({ sql, dataDir, defaultDb: 'sql' }, logger));
    expect(err.message).to.match(/^cannot connect to mysql database 'nope' at 127\.0\.0\.1:1 as someone: .*ECONNREFUSED/);
    expect(err.message).to.not.include('hunter2');
  });

  it('renders migrations to SQL for each dialect without a connection', () => {
    const sqlite = renderMigrations('better-sqlite3', ACCOUNT_MIGRATIONS);
    const mysql = renderMigrations('mysql2', ACCOUNT_MIGRATIONS);
    const pgsql = renderMigrations('pg', ACCOUNT_MIGRATIONS);
    for (const sql of [sqlite, mysql, pgsql]) {
      expect(sql).to.match(/^-- 001_users\ncreate table/);
      expect(sql).to.include('scram_sha512_server');
      expect(sql.trimEnd().endsWith(';')).to.equal(true);
    }
    expect(mysql).to.include('utf8mb4_bin');
    expect(pgsql).to.include('collate "C"');
  });

  it('rejects duplicate migration ids', async () => {
    const storage = await Storage.open({ sql: sqliteSettings('main.db'), dataDir, defaultDb: 'sql' }, logger);
    try {
      const err = await failure(storage.migrate('dup', [table('a'), table('a')]));
      expect(err.message).to.include("migration id 'create_a' appears twice");
    } finally {
      await storage.close();
    }
  });
});

for (const database of testDatabases()) {
  describe(`storage and accounts on ${database.name}`, function () {
    let dataDir: string;
    let storage: Storage;
    let sql: SqlSettings;

    before(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), `svc-accounts-${database.name}-`));
      sql = await database.settings(dataDir);
      storage = await Storage.open({ sql, dataDir, defaultDb: 'sql' }, logger);
    });

    after(async () => {
      await storage?.close();
      await database.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('explains why it cannot open a database, naming it', async () => {
      if (sql.type === 'sqlite') {
        // A directory where the file should be.
        const err = await failure(Storage.open({ sql: { ...sql, database: '.' }, dataDir, defaultDb: 'sql' }, logger));
        expect(err.message).to.match(new RegExp(`^cannot open sqlite database '${dataDir}': `));
        return;
      }
      const missing = `${sql.database}_missing`;
      const err = await failure(Storage.open({ sql: { ...sql, database: missing }, dataDir, defaultDb: 'sql' }, logger));
      const port = sql.type === 'mysql' ? 3306 : 5432;
      expect(err.message).to.include(`cannot connect to ${sql.type} database '${missing}' at 127.0.0.1:${port} as ${sql.username}: `);
      expect(err.message).to.match(sql.type === 'mysql' ? /ER_BAD_DB_ERROR Unknown database/ : /3D000 database ".*" does not exist/);
    });

    describe('migrations', () => {
      it('applies the accounts schema once', async () => {
        expect(await storage.migrate(ACCOUNTS_MIGRATION_OWNER, ACCOUNT_MIGRATIONS)).to.deep.equal(['001_users']);
        expect(await storage.migrate(ACCOUNTS_MIGRATION_OWNER, ACCOUNT_MIGRATIONS)).to.deep.equal([]);
        expect(await storage.db().schema.hasTable(USERS_TABLE)).to.equal(true);
        const rows = await storage.db()(MIGRATIONS_TABLE).select('owner', 'id', 'applied_at').where({ owner: 'kernel' });
        expect(rows).to.have.length(1);
        expect(rows[0].id).to.equal('001_users');
        expect(rows[0].applied_at).to.be.a('number').and.be.closeTo(Date.now(), 60_000);
      });

      it('keeps one sequence per owner and applies only what is new, in order', async () => {
        expect(await storage.migrate('mod_a', [table('mod_a_one')])).to.deep.equal(['create_mod_a_one']);
        expect(await storage.migrate('mod_b', [table('mod_a_one_b')])).to.deep.equal(['create_mod_a_one_b']);
        expect(await storage.migrate('mod_a', [table('mod_a_one'), table('mod_a_two'), table('mod_a_three')])).to.deep.equal([
          'create_mod_a_two',
          'create_mod_a_three',
        ]);
      });

      it('does not record a migration that failed, and names it', async () => {
        const broken: Migration = { id: '002_broken', up: (k) => k.schema.raw('create table') };
        const err = await failure(storage.migrate('mod_broken', [table('mod_broken_ok'), broken]));
        expect(err.message).to.match(/^migration mod_broken\/002_broken failed: /);
        const ids = (await storage.db()(MIGRATIONS_TABLE).select('id').where({ owner: 'mod_broken' })).map((r) => r.id);
        expect(ids).to.deep.equal(['create_mod_broken_ok']);
        const fixed: Migration = { id: '002_broken', up: (k) => k.schema.createTable('mod_broken_fixed', (t) => t.integer('n')) };
        expect(await storage.migrate('mod_broken', [table('mod_broken_ok'), fixed])).to.deep.equal(['002_broken']);
      });

      it('applies each migration once when two processes migrate at the same time', async function () {
        this.timeout(60_000);
        const names = Array.from({ length: 30 }, (_, i) => `race_${i}`);
        const competitor = await startCompetingMigrator({ sql, dataDir, defaultDb: 'sql' }, 'race', names);
        const { applied } = await competitor.go();
        const [ours, theirs] = await Promise.all([storage.migrate('race', names.map(table)), applied]);
        expect([...ours, ...theirs].sort()).to.deep.equal(names.map((n) => `create_${n}`).sort());
        for (const name of names) expect(await storage.db().schema.hasTable(name)).to.equal(true);
      });

      it('returns BIGINT and COUNT(*) as numbers', async () => {
        const [{ n }] = (await storage.db()(MIGRATIONS_TABLE).count({ n: '*' })) as { n: unknown }[];
        expect(n).to.be.a('number');
      });
    });

    describe('accounts', () => {
      let hooks: HookBus;
      let settings: AccountSettings;
      let accounts: AccountService;
      const db = (): Knex => storage.db();

      beforeEach(async () => {
        await storage.migrate(ACCOUNTS_MIGRATION_OWNER, ACCOUNT_MIGRATIONS);
        await db()(USERS_TABLE).delete();
        hooks = new HookBus();
        settings = {
          hosts: ['localhost', 'Example.ORG'],
          passwordFormat: 'scram',
          scramHashes: ['sha1', 'sha256', 'sha512'],
          scramIterations: 1024,
          cache: { enabled: true, size: 100, lifeTimeSeconds: 60 },
        };
        accounts = new AccountService(db, hooks, () => settings, logger);
      });

      const row = async (user: string, host = 'localhost') => db()(USERS_TABLE).first('*').where({ host, username: user });

      it('registers an account and runs register_user', async () => {
        const registered: string[] = [];
        hooks.add('register_user', (user, host) => void registered.push(`${user}@${host}`));
        await accounts.register('Alice', 'LocalHost', 'secret');
        expect(registered).to.deep.equal(['alice@localhost']);
        expect(await accounts.exists('alice', 'localhost')).to.equal(true);
        expect(await accounts.exists('ALICE', 'localhost')).to.equal(true);
        expect(await accounts.exists('bob', 'localhost')).to.equal(false);
        expect(await accounts.exists('alice', 'example.org')).to.equal(false);
      });

      it('stores only SCRAM keys of every hash by default', async () => {
        await accounts.register('alice', 'localhost', 'secret');
        const stored = await row('alice');
        expect(stored.password).to.equal(null);
        expect(Number(stored.scram_iterations)).to.equal(1024);
        const salt = Buffer.from(stored.scram_salt, 'base64');
        expect(salt).to.have.length(16);
        for (const hash of SCRAM_HASHES) {
          const keys = await deriveScramKeys('secret', salt, 1024, hash);
          expect(stored[`scram_${hash}_stored`]).to.equal(keys.storedKey.toString('base64'));
          expect(stored[`scram_${hash}_server`]).to.equal(keys.serverKey.toString('base64'));
        }
        expect(Number(stored.created_at)).to.be.closeTo(Date.now(), 60_000);
      });

      it('stores the password itself with the plain format', async () => {
        settings.passwordFormat = 'plain';
        await accounts.register('alice', 'localhost', 'secret');
        const stored = await row('alice');
        expect(stored.password).to.equal('secret');
        expect(stored.scram_salt).to.equal(null);
        expect(stored.scram_sha256_stored).to.equal(null);
      });

      for (const format of ['scram', 'plain'] as const) {
        it(`checks passwords stored as ${format}`, async () => {
          settings.passwordFormat = format;
          await accounts.register('alice', 'localhost', 'correct horse');
          expect(await accounts.checkPassword('alice', 'localhost', 'correct horse')).to.equal(true);
          expect(await accounts.checkPassword('Alice', 'LOCALHOST', 'correct horse')).to.equal(true);
          expect(await accounts.checkPassword('alice', 'localhost', 'correct horsE')).to.equal(false);
          expect(await accounts.checkPassword('alice', 'localhost', '')).to.equal(false);
          expect(await accounts.checkPassword('alice', 'localhost', 'x'.repeat(5000))).to.equal(false);
          expect(await accounts.checkPassword('nobody', 'localhost', 'correct horse')).to.equal(false);
          expect(await accounts.checkPassword('alice', 'example.org', 'correct horse')).to.equal(false);
        });
      }

      it('takes as long to refuse a missing account as a wrong password: timing does not tell who exists', async () => {
        // Enough iterations that key derivation, not the database, decides the time.
        settings.scramIterations = 100_000;
        await accounts.register('alice', 'localhost', 'correct horse');
        const elapsed = async (user: string) => {
          const start = process.hrtime.bigint();
          expect(await accounts.checkPassword(user, 'localhost', 'wrong horse')).to.equal(false);
          return Number(process.hrtime.bigint() - start) / 1e6;
        };
        const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
        const wrong: number[] = [];
        const missing: number[] = [];
        for (let i = 0; i < 5; i++) {
          wrong.push(await elapsed('alice'));
          missing.push(await elapsed(`nobody${i}`));
        }
        expect(median(missing)).to.be.at.least(median(wrong) * 0.5);
      });

      it('refuses an existing account with conflict, also when two registrations race', async () => {
        await accounts.register('alice', 'localhost', 'one');
        const err = await rejection(accounts.register('ALICE', 'localhost', 'two'));
        expect(err.kind).to.equal('conflict');
        expect(err.message).to.equal('account alice@localhost already exists');
        expect(await accounts.checkPassword('alice', 'localhost', 'one')).to.equal(true);

        // Both pass the early check while PBKDF2 runs; the primary key decides.
        const results = await Promise.allSettled([
          accounts.register('bob', 'localhost', 'b1'),
          accounts.register('bob', 'localhost', 'b2'),
          accounts.register('bob', 'localhost', 'b3'),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(1);
        for (const r of results) {
          if (r.status === 'rejected') expect((r.reason as CommandError).kind).to.equal('conflict');
        }
      });

      it('registers many accounts at once, sharing INSERTs, each with its own password; a taken name among them fails alone', async () => {
        settings.scramIterations = 1;
        await accounts.register('taken', 'localhost', 'first');
        const names = Array.from({ length: 60 }, (_, i) => `many${i}`);
        const results = await Promise.allSettled([...names, 'taken'].map((name) => accounts.register(name, 'localhost', `pw-${name}`)));
        expect(results.slice(0, 60).every((r) => r.status === 'fulfilled'), JSON.stringify(results.find((r) => r.status === 'rejected'))).to.equal(true);
        const last = results[60]!;
        expect(last.status).to.equal('rejected');
        expect(((last as PromiseRejectedResult).reason as CommandError).kind).to.equal('conflict');
        for (const name of [names[0]!, names[29]!, names[59]!]) {
          expect(await accounts.checkPassword(name, 'localhost', `pw-${name}`), name).to.equal(true);
          expect(await accounts.checkPassword(name, 'localhost', 'pw-many1'), name).to.equal(name === 'many1');
        }
        expect(await accounts.checkPassword('taken', 'localhost', 'first')).to.equal(true);
        expect((await accounts.listUsers('localhost')).filter((u) => u.startsWith('many'))).to.have.length(60);
      });

      it('lists a host\'s users sorted by bytes, and counts them', async () => {
        const names = ['zoe', 'bob', 'alice', 'Émile', 'adam', '中文', '😀', '\uff61x', 'a.b', 'a-b', 'a_b', 'a1'];
        settings.scramIterations = 1;
        for (const name of names) await accounts.register(name, 'localhost', 'pw');
        await accounts.register('carol', 'example.org', 'pw');
        const expected = names
          .map((n) => n.normalize('NFKC').toLowerCase())
          .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(await accounts.listUsers('localhost')).to.deep.equal(expected);
        expect(await accounts.listUsers('EXAMPLE.org.')).to.deep.equal(['carol']);
        expect(await accounts.countUsers('localhost')).to.equal(names.length);
        expect(await accounts.countUsers('example.org')).to.equal(1);
        expect(await accounts.countUsers()).to.equal(names.length + 1);
        // A host no longer served is left out of the total.
        settings.hosts = ['localhost'];
        expect(await accounts.countUsers()).to.equal(names.length);
      });

      it('unregisters: the auth record goes first, then remove_user runs', async () => {
        await accounts.register('alice', 'localhost', 'secret');
        const seen: { user: string; host: string; existed: boolean }[] = [];
        hooks.add('remove_user', async (user, host) => {
          seen.push({ user, host, existed: await accounts.exists(user, host) });
        });
        await accounts.unregister('Alice', 'localhost');
        expect(seen).to.deep.equal([{ user: 'alice', host: 'localhost', existed: false }]);
        expect(await accounts.exists('alice', 'localhost')).to.equal(false);
        expect(await accounts.checkPassword('alice', 'localhost', 'secret')).to.equal(false);
        const err = await rejection(accounts.unregister('alice', 'localhost'));
        expect(err.kind).to.equal('not_found');
        expect(err.message).to.equal('account alice@localhost does not exist');
        expect(seen).to.have.length(1);
      });

      it('changes a password, in the current format', async () => {
        await accounts.register('alice', 'localhost', 'old');
        settings.passwordFormat = 'plain';
        await accounts.setPassword('alice', 'localhost', 'new');
        expect(await accounts.checkPassword('alice', 'localhost', 'old')).to.equal(false);
        expect(await accounts.checkPassword('alice', 'localhost', 'new')).to.equal(true);
        const stored = await row('alice');
        expect(stored.password).to.equal('new');
        expect(stored.scram_salt).to.equal(null);
        expect(stored.scram_sha1_stored).to.equal(null);
        const err = await rejection(accounts.setPassword('nobody', 'localhost', 'x'));
        expect(err.kind).to.equal('not_found');
        expect(err.message).to.equal('account nobody@localhost does not exist');
      });

      it('trusts a verified password from the cache until the password changes', async () => {
        await accounts.register('alice', 'localhost', 'old');
        expect(await accounts.checkPassword('alice', 'localhost', 'old')).to.equal(true);
        // Behind the service's back: only the cache can still say yes.
        await db()(USERS_TABLE).where({ host: 'localhost', username: 'alice' }).update({ scram_sha256_stored: 'AAAA' });
        expect(await accounts.checkPassword('alice', 'localhost', 'old')).to.equal(true);
        expect(await accounts.checkPassword('alice', 'localhost', 'other')).to.equal(false);

        await accounts.setPassword('alice', 'localhost', 'new');
        expect(await accounts.checkPassword('alice', 'localhost', 'old')).to.equal(false);
        expect(await accounts.checkPassword('alice', 'localhost', 'new')).to.equal(true);
      });

      it('drops cached credentials on clearCache, on the clear_cache hook and on unregister', async () => {
        await accounts.register('alice', 'localhost', 'pw');
        const sabotage = () => db()(USERS_TABLE).where({ host: 'localhost', username: 'alice' }).update({ scram_sha256_stored: 'AAAA' });
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(true);
        await sabotage();
        accounts.clearCache();
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(false);

        await accounts.setPassword('alice', 'localhost', 'pw');
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(true);
        await sabotage();
        await hooks.run('clear_cache');
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(false);

        await accounts.setPassword('alice', 'localhost', 'pw');
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(true);
        await accounts.unregister('alice', 'localhost');
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(false);
      });

      it('always verifies when the cache is disabled', async () => {
        settings.cache = { enabled: false, size: 100, lifeTimeSeconds: 60 };
        await accounts.register('alice', 'localhost', 'pw');
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(true);
        await db()(USERS_TABLE).where({ host: 'localhost', username: 'alice' }).update({ scram_sha256_stored: 'AAAA' });
        expect(await accounts.checkPassword('alice', 'localhost', 'pw')).to.equal(false);
      });

      it('converts plain passwords of a host to SCRAM, keeping them working', async () => {
        settings.passwordFormat = 'plain';
        await accounts.register('alice', 'localhost', 'pa$$wörd');
        await accounts.register('bob', 'localhost', 'bobpw');
        await accounts.register('carol', 'example.org', 'carolpw');
        settings.passwordFormat = 'scram';
        await accounts.register('dave', 'localhost', 'davepw');

        expect(await accounts.convertToScram('localhost')).to.equal(2);
        for (const [user, password] of [['alice', 'pa$$wörd'], ['bob', 'bobpw']]) {
          const stored = await row(user!);
          expect(stored.password).to.equal(null);
          const salt = Buffer.from(stored.scram_salt, 'base64');
          for (const hash of SCRAM_HASHES) {
            const keys = await deriveScramKeys(password!, salt, Number(stored.scram_iterations), hash);
            expect(stored[`scram_${hash}_stored`]).to.equal(keys.storedKey.toString('base64'));
          }
          accounts.clearCache();
          expect(await accounts.checkPassword(user!, 'localhost', password!)).to.equal(true);
          expect(await accounts.checkPassword(user!, 'localhost', 'wrong')).to.equal(false);
        }
        expect((await row('carol', 'example.org')).password).to.equal('carolpw');
        expect(await accounts.convertToScram('localhost')).to.equal(0);

        const err = await rejection(accounts.convertToScram('elsewhere.net'));
        expect(err.kind).to.equal('bad_argument');
        expect(err.argument).to.equal('host');
      });

      it('gives SASL the stored keys, or keys derived on the spot from a plain password', async () => {
        await accounts.register('alice', 'localhost', 'pw');
        settings.passwordFormat = 'plain';
        await accounts.register('bob', 'localhost', 'bobpw');
        for (const [user, password] of [['alice', 'pw'], ['bob', 'bobpw']] as const) {
          for (const hash of SCRAM_HASHES) {
            const credential = await accounts.getScramCredentials(user, 'localhost', hash);
            expect(credential, `${user} ${hash}`).to.not.equal(undefined);
            const keys = await deriveScramKeys(password, credential!.salt, credential!.iterations, hash);
            expect(credential!.storedKey.equals(keys.storedKey)).to.equal(true);
            expect(credential!.serverKey.equals(keys.serverKey)).to.equal(true);
          }
        }
        expect(await accounts.getScramCredentials('nobody', 'localhost', 'sha256')).to.equal(undefined);
        await db()(USERS_TABLE).where({ host: 'localhost', username: 'alice' }).update({ scram_sha512_stored: null, scram_sha512_server: null });
        expect(await accounts.getScramCredentials('alice', 'localhost', 'sha512')).to.equal(undefined);
      });

      it('names the argument at fault and says why', async () => {
        const cases: [() => Promise<unknown>, string, string | RegExp][] = [
          [() => accounts.register('a@b', 'localhost', 'pw'), 'user', "user name contains '@', which is not allowed"],
          [() => accounts.register('', 'localhost', 'pw'), 'user', 'user name is empty'],
          [() => accounts.register('a'.repeat(192), 'localhost', 'pw'), 'user', /191/],
          [
            () => accounts.register('alice', 'elsewhere.net', 'pw'),
            'host',
            "unknown virtual host 'elsewhere.net': this server serves localhost, example.org",
          ],
          [() => accounts.register('alice', 'bad_host', 'pw'), 'host', /contains '_'/],
          [() => accounts.register('alice', 'localhost', ''), 'password', 'password is empty'],
          [() => accounts.register('alice', 'localhost', 'a\0b'), 'password', /NUL/],
          [() => accounts.register('alice', 'localhost', 'x'.repeat(1025)), 'password', 'password is 1025 characters long, the limit is 1024'],
          [() => accounts.setPassword('alice', 'localhost', ''), 'password', 'password is empty'],
          [() => accounts.exists('a b', 'localhost'), 'user', /whitespace/],
          [() => accounts.listUsers('elsewhere.net'), 'host', /unknown virtual host/],
          [() => accounts.countUsers('elsewhere.net'), 'host', /unknown virtual host/],
          [() => accounts.unregister('alice', 'elsewhere.net'), 'host', /unknown virtual host/],
        ];
        for (const [call, argument, message] of cases) {
          const err = await rejection(call());
          expect(err.kind).to.equal('bad_argument');
          expect(err.argument).to.equal(argument);
          if (typeof message === 'string') expect(err.message).to.equal(message);
          else expect(err.message).to.match(message);
        }
        expect(await accounts.countUsers()).to.equal(0);
        // A password of 1024 characters, some astral, is fine.
        await accounts.register('alice', 'localhost', '😀'.repeat(1024));
        expect(await accounts.checkPassword('alice', 'localhost', '😀'.repeat(1024))).to.equal(true);
      });

      it('follows the settings getter: a reloaded host list applies at once', async () => {
        await rejection(accounts.register('alice', 'new.example', 'pw'));
        settings.hosts = [...settings.hosts, 'new.example'];
        await accounts.register('alice', 'new.example', 'pw');
        expect(await accounts.listUsers('new.example')).to.deep.equal(['alice']);
      });

      it('lists 20 000 accounts quickly', async function () {
        this.timeout(120_000);
        const now = Date.now();
        const rows = Array.from({ length: 20_000 }, (_, i) => ({ host: 'example.org', username: `user${i}`, password: 'x', created_at: now }));
        for (let i = 0; i < rows.length; i += 500) await db()(USERS_TABLE).insert(rows.slice(i, i + 500));
        const started = performance.now();
        const users = await accounts.listUsers('example.org');
        const elapsed = performance.now() - started;
        expect(users).to.have.length(20_000);
        expect(users[0]).to.equal('user0');
        expect(users[1]).to.equal('user1');
        expect(users[2]).to.equal('user10');
        expect(elapsed).to.be.below(2000);
        expect(await accounts.countUsers('example.org')).to.equal(20_000);
      });
    });
  });
}
