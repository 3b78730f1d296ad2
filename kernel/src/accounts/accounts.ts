/**
 * Accounts: the authentication records of the served virtual hosts (register, unregister, passwords).
 * Data other modules keep for an account is theirs; they delete it on the `remove_user` hook.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Knex } from 'knex';
import { badArgument, conflict, notFound } from '@service/plugin-api';
import type { CachesApi } from '@service/plugin-api';
import type { HookBus } from '../hooks/hooks.js';
import { BatchWriter, pluck, preparedRead } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';
import { isUniqueViolation } from '@service/plugin-api';
import type { CacheMark } from '../caches/cache-epoch.js';
import { CredentialCache, type CredentialCacheSettings } from './credential-cache.js';
import { InvalidJid, nameprep, nodeprep } from '@service/plugin-api';
import { USERS_TABLE } from './migrations.js';
import {
  DEFAULT_SCRAM_ITERATIONS,
  SCRAM_HASHES,
  SCRAM_SALT_BYTES,
  createScramCredentials,
  deriveScramKeys,
  normalizePassword,
  passwordProhibition,
  verifyScramPassword,
  type ScramCredential,
  type ScramCredentials,
  type ScramHash,
  type ScramKeys,
} from './scram.js';

export type PasswordFormat = 'plain' | 'scram';

export interface AccountSettings {
  /** The served virtual hosts. A reload replaces the array rather than mutating it (its normalized form is kept per array). */
  hosts: readonly string[];
  passwordFormat: PasswordFormat;
  /** The SCRAM hashes a password is stored with (auth_scram_hash). */
  scramHashes: readonly ScramHash[];
  scramIterations?: number;
  cache: CredentialCacheSettings;
}

export const MAX_PASSWORD_LENGTH = 1024;

/** Rows read per round trip while converting passwords, and PBKDF2 runs in flight (libuv's pool has 4 threads). */
const CONVERT_BATCH = 500;
const CONVERT_CONCURRENCY = 4;

type ScramColumn = `scram_${ScramHash}_${'stored' | 'server'}`;

type CredentialColumns = {
  password: string | null;
  scram_salt: string | null;
  scram_iterations: number | null;
} & Record<ScramColumn, string | null>;

type UserRow = CredentialColumns & { host: string; username: string; created_at: number };

/** The account's row, read at every login and registration: compiled once (see preparedRead). */
const ACCOUNT_ROW = preparedRead<'host' | 'user', UserRow>((db, p) => db(USERS_TABLE).first('*').where({ host: p('host'), username: p('user') }));

/**
 * Registrations that come together share INSERTs (the plugin API's group commit): each was a commit of its
 * own, and with several workers on the embedded SQLite each commit takes the file's write lock they share; a
 * worker that finds it taken sleeps in SQLite's busy handler with its event loop held (at c=16, two workers:
 * about 0.18 such sleeps per registration). A lone registration goes at the next turn of the event loop.
 */
const MAX_ROWS_PER_INSERT = 100;
const MIN_MS_BETWEEN_INSERTS = 4;

/** The credential cache's name among the shared caches. */
export const CREDENTIALS_CACHE = 'credentials';

export class AccountService {
  readonly #db: () => Knex;
  readonly #hooks: HookBus;
  readonly #settings: () => AccountSettings;
  readonly #logger: Logger;
  readonly #cache: CredentialCache;
  readonly #inserts = new BatchWriter<UserRow>({
    // A multi-row INSERT; one that fails is written again row by row, so that a name taken meanwhile fails alone.
    write: async (rows) => {
      await this.#db()(USERS_TABLE).insert(rows as UserRow[]);
    },
    maxRows: MAX_ROWS_PER_INSERT,
    minIntervalMs: MIN_MS_BETWEEN_INSERTS,
  });
  #served: { source: readonly string[]; normalized: Set<string> } | undefined;

  readonly #caches: CachesApi | undefined;

  /**
   * Getters, so a configuration reload takes effect without rebuilding the service. `caches` carries what
   * the credential cache forgets to the other nodes of a cluster, and theirs here.
   */
  constructor(db: () => Knex, hooks: HookBus, settings: () => AccountSettings, logger: Logger, caches?: CachesApi) {
    this.#db = db;
    this.#hooks = hooks;
    this.#settings = settings;
    this.#logger = logger;
    this.#caches = caches;
    this.#cache = new CredentialCache(() => this.#settings().cache);
    hooks.add('clear_cache', () => this.clearCache());
    caches?.register(CREDENTIALS_CACHE, (key) => {
      const at = key?.lastIndexOf('@') ?? -1;
      if (key === undefined || at < 0) this.#cache.clear();
      else this.#cache.invalidate(key.slice(0, at), key.slice(at + 1));
    });
  }

  /** Forgets the account's verified passwords here and on every node. */
  async #forgetCredentials(account: { user: string; host: string }): Promise<void> {
    this.#cache.invalidate(account.user, account.host);
    await this.#caches?.changed(CREDENTIALS_CACHE, `${account.user}@${account.host}`);
  }

  async register(user: string, host: string, password: string): Promise<void> {
    const account = this.#account(user, host);
    checkPasswordArgument(password);
    // A cheap early answer before spending PBKDF2 time; the primary key settles races below.
    if (await this.#exists(account)) throw accountExists(account);
    const row: UserRow = {
      host: account.host,
      username: account.user,
      created_at: Date.now(),
      ...(await this.#credentialColumns(password)),
    };
    try {
      await this.#inserts.add(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw accountExists(account);
      throw err;
    }
    this.#logger.info({ user: account.user, host: account.host }, 'account registered');
    await this.#hooks.run('register_user', account.user, account.host);
  }

  /** Deletes the authentication record first, so the account cannot log in while modules clear its data. */
  async unregister(user: string, host: string): Promise<void> {
    const account = this.#account(user, host);
    const deleted = await this.#db()(USERS_TABLE).where({ host: account.host, username: account.user }).delete();
    if (!deleted) throw accountMissing(account);
    await this.#forgetCredentials(account);
    this.#logger.info({ user: account.user, host: account.host }, 'account removed');
    await this.#hooks.run('remove_user', account.user, account.host);
  }

  async exists(user: string, host: string): Promise<boolean> {
    return this.#exists(this.#account(user, host));
  }

  /**
   * When the account was registered (epoch ms), or undefined when there is none: what tells a name
   * registered again apart from the account that held it before (e.g. for a sign-in that outlived it).
   */
  async registeredAt(user: string, host: string): Promise<number | undefined> {
    const { user: username, host: vhost } = this.#account(user, host);
    const row = (await this.#db()(USERS_TABLE).first('created_at').where({ host: vhost, username })) as { created_at: number | string } | undefined;
    return row ? Number(row.created_at) : undefined;
  }

  /**
   * The account named by command arguments, normalized, which must be registered on a served host: a name
   * that cannot be a JID part or a host not served here is a 400 naming the argument, an unknown account
   * a 404 naming it.
   */
  async existing(user: string, host: string): Promise<{ user: string; host: string }> {
    const account = this.#account(user, host);
    if (!(await this.#exists(account))) throw notFound(`account ${account.user}@${account.host} does not exist`);
    return account;
  }

  /** A host argument, normalized; a 400 naming the argument when it is not a host this server serves. */
  servedHost(host: string): string {
    return this.#servedHost(host);
  }

  /**
   * Whether `password` logs the account in: it is the account's, and no `password_login_check` handler
   * refuses the account (a banned one). False for a missing account.
   */
  async checkPassword(user: string, host: string, password: string): Promise<boolean> {
    // The cache is keyed by the names as given, so a hit costs no normalization (HTTP Basic checks on
    // every request); entries are filed under the normalized account, so invalidation still finds them.
    if (!(this.#cache.isVerified(user, host, password) || (await this.#verifyStoredPassword(user, host, password)))) return false;
    // A right password of an account that may not log in now (banned) is refused like a wrong one.
    return this.#hooks.count('password_login_check') === 0 || (await this.loginRefusal(user, host)) === undefined;
  }

  /**
   * A mark to take before `checkPassword`, for a caller that keeps the success itself (per connection):
   * `stillTrusted(mark)` says later whether the success still stands without checking the password again,
   * under the credential cache's rules. Undefined when the cache is off.
   */
  verificationMark(): CacheMark | undefined {
    return this.#cache.mark();
  }

  stillTrusted(mark: CacheMark): boolean {
    return this.#cache.trusts(mark);
  }

  /**
   * Why the account may not log in although its password is right (the `password_login_check` hook
   * refused: a banned account), or undefined when nothing objects.
   */
  async loginRefusal(user: string, host: string): Promise<string | undefined> {
    if (this.#hooks.count('password_login_check') === 0) return undefined;
    const account = this.#account(user, host);
    try {
      await this.#hooks.run('password_login_check', account.user, account.host);
      return undefined;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.#logger.info({ user: account.user, host: account.host, reason }, 'login refused');
      return reason;
    }
  }

  /**
   * How the account's password is stored: in plain (the password itself, for check_password_hash — never
   * log it), as SCRAM keys (nothing of the password can be recovered), or undefined for a missing account.
   */
  async storedPassword(user: string, host: string): Promise<{ format: 'plain'; password: string } | { format: 'scram' } | undefined> {
    const row = await this.#row(this.#account(user, host));
    if (!row) return undefined;
    return row.password !== null ? { format: 'plain', password: row.password } : { format: 'scram' };
  }

  async setPassword(user: string, host: string, password: string): Promise<void> {
    const account = this.#account(user, host);
    checkPasswordArgument(password);
    const columns = await this.#credentialColumns(password);
    const updated = await this.#db()(USERS_TABLE).where({ host: account.host, username: account.user }).update(columns);
    if (!updated) throw accountMissing(account);
    await this.#forgetCredentials(account);
    this.#logger.info({ user: account.user, host: account.host }, 'password changed');
  }

  /**
   * User names of a host in byte order (as ejabberd lists them): the schema gives the username column a
   * binary collation on every database, so the database's order is the answer.
   */
  async listUsers(host: string): Promise<string[]> {
    const vhost = this.#servedHost(host);
    return pluck<string>(this.#db()(USERS_TABLE).select('username').where({ host: vhost }).orderBy('username'));
  }

  /** Accounts of one host, or of all served hosts. */
  async countUsers(host?: string): Promise<number> {
    const query = this.#db()(USERS_TABLE);
    if (host !== undefined) query.where({ host: this.#servedHost(host) });
    else query.whereIn('host', [...this.#servedHosts()]);
    const [result] = (await query.count({ n: '*' })) as { n: number | string }[];
    return Number(result?.n ?? 0);
  }

  /**
   * Replaces the plain passwords stored for a host by SCRAM keys of every hash; returns how many. Long on a
   * big host (a key derivation per account): `progress` hears how far it is after each batch.
   */
  async convertToScram(host: string, progress?: (done: number, total: number) => void): Promise<number> {
    const vhost = this.#servedHost(host);
    const iterations = this.#iterations();
    const [pending] = (await this.#db()(USERS_TABLE).where({ host: vhost }).whereNotNull('password').count({ n: '*' })) as { n: number | string }[];
    const total = Number(pending?.n ?? 0);
    let done = 0;
    let converted = 0;
    let after = '';
    for (;;) {
      const batch: { username: string; password: string }[] = await this.#db()(USERS_TABLE)
        .select('username', 'password')
        .where({ host: vhost })
        .whereNotNull('password')
        .andWhere('username', '>', after)
        .orderBy('username')
        .limit(CONVERT_BATCH);
      if (!batch.length) break;
      after = batch[batch.length - 1]!.username;
      const results = await mapConcurrently(batch, CONVERT_CONCURRENCY, async ({ username, password }) => {
        const columns = scramColumns(await createScramCredentials(password, iterations, this.#settings().scramHashes));
        // Matching the old password skips an account whose password changed meanwhile.
        return this.#db()(USERS_TABLE).where({ host: vhost, username, password }).update(columns);
      });
      converted += results.reduce((sum, n) => sum + n, 0);
      done += batch.length;
      progress?.(done, total);
    }
    this.#logger.info({ host: vhost, converted }, 'plain passwords converted to SCRAM');
    return converted;
  }

  /**
   * What SASL needs for one hash, or undefined when the account is missing or has no key for that hash.
   * An account stored in plain gets keys derived on the spot, under a fresh salt each time.
   */
  async getScramCredentials(user: string, host: string, hash: ScramHash): Promise<ScramCredential | undefined> {
    const row = await this.#row(this.#account(user, host));
    if (!row) return undefined;
    if (row.password !== null) {
      const salt = randomBytes(SCRAM_SALT_BYTES);
      const iterations = this.#iterations();
      return { salt, iterations, ...(await deriveScramKeys(row.password, salt, iterations, hash)) };
    }
    const stored = storedScram(row);
    const keys = stored?.keys[hash];
    return stored && keys ? { salt: stored.salt, iterations: stored.iterations, ...keys } : undefined;
  }

  clearCache(): void {
    this.#cache.clear();
  }

  #account(user: string, host: string): { user: string; host: string } {
    let normalized: string;
    try {
      normalized = nodeprep(user);
    } catch (err) {
      if (err instanceof InvalidJid) throw badArgument('user', err.message);
      throw err;
    }
    return { user: normalized, host: this.#servedHost(host) };
  }

  #servedHost(host: string): string {
    let normalized: string;
    try {
      normalized = nameprep(host);
    } catch (err) {
      if (err instanceof InvalidJid) throw badArgument('host', err.message);
      throw err;
    }
    const served = this.#servedHosts();
    if (!served.has(normalized)) {
      throw badArgument('host', `unknown virtual host '${host}': this server serves ${[...served].join(', ') || 'no host'}`);
    }
    return normalized;
  }

  #servedHosts(): Set<string> {
    const { hosts } = this.#settings();
    // Every check of a password passes here; normalize the list again only when a reload replaced it.
    if (this.#served?.source === hosts) return this.#served.normalized;
    const normalized = new Set<string>();
    for (const host of hosts) {
      try {
        normalized.add(nameprep(host));
      } catch {
        // The configuration validates hosts; one that slipped through can match nothing.
      }
    }
    this.#served = { source: hosts, normalized };
    return normalized;
  }

  #iterations(): number {
    return this.#settings().scramIterations ?? DEFAULT_SCRAM_ITERATIONS;
  }

  async #exists({ user, host }: { user: string; host: string }): Promise<boolean> {
    return (await this.#row({ user, host })) !== undefined;
  }

  /**
   * Whether `password` is the account's, read from storage (the credential cache missed); a right one is
   * cached. False for a missing account; a password that could never have been stored (empty, too long) is
   * false without any hashing.
   */
  async #verifyStoredPassword(user: string, host: string, password: string): Promise<boolean> {
    const account = this.#account(user, host);
    if (passwordProblem(password)) return false;
    const epoch = this.#cache.epoch();
    const row = await this.#row(account);
    if (!row) {
      // As long as a wrong password takes with the configured format: the answer's timing must not tell
      // which accounts exist.
      if (this.#settings().passwordFormat === 'plain') equalPasswords(password, '');
      else await deriveScramKeys(password, UNKNOWN_ACCOUNT_SALT, this.#iterations(), 'sha256');
      return false;
    }
    const verified = await verifyStored(row, password);
    if (verified) this.#cache.remember(user, host, password, epoch, account);
    return verified;
  }

  async #row({ user, host }: { user: string; host: string }): Promise<UserRow | undefined> {
    return ACCOUNT_ROW.first(this.#db(), { host, user });
  }

  async #credentialColumns(password: string): Promise<CredentialColumns> {
    if (this.#settings().passwordFormat === 'plain') {
      return { ...scramColumns(undefined), password };
    }
    return scramColumns(await createScramCredentials(password, this.#iterations(), this.#settings().scramHashes));
  }
}

/** The SCRAM columns of a row (every other credential column cleared), or all cleared. */
function scramColumns(credentials: ScramCredentials | undefined): CredentialColumns {
  const columns = {
    password: null,
    scram_salt: credentials ? credentials.salt.toString('base64') : null,
    scram_iterations: credentials ? credentials.iterations : null,
  } as CredentialColumns;
  for (const hash of SCRAM_HASHES) {
    const keys = credentials?.keys[hash];
    columns[`scram_${hash}_stored`] = keys ? keys.storedKey.toString('base64') : null;
    columns[`scram_${hash}_server`] = keys ? keys.serverKey.toString('base64') : null;
  }
  return columns;
}

function storedScram(row: UserRow): ScramCredentials | undefined {
  if (row.scram_salt === null || row.scram_iterations === null) return undefined;
  const keys: Partial<Record<ScramHash, ScramKeys>> = {};
  for (const hash of SCRAM_HASHES) {
    const stored = row[`scram_${hash}_stored`];
    const server = row[`scram_${hash}_server`];
    if (stored !== null && server !== null) {
      keys[hash] = { storedKey: Buffer.from(stored, 'base64'), serverKey: Buffer.from(server, 'base64') };
    }
  }
  return { salt: Buffer.from(row.scram_salt, 'base64'), iterations: Number(row.scram_iterations), keys };
}

/** A fixed salt for the decoy derivation of a missing account's check (its result is thrown away). */
const UNKNOWN_ACCOUNT_SALT = randomBytes(16);

async function verifyStored(row: UserRow, password: string): Promise<boolean> {
  if (row.password !== null) return equalPasswords(password, row.password);
  const scram = storedScram(row);
  return scram ? verifyScramPassword(password, scram) : false;
}

/**
 * Constant-time comparison of plain passwords: digests have equal lengths whatever the inputs, and both
 * sides are normalized as SCRAM normalizes them, so a password keeps working after conversion.
 */
function equalPasswords(given: string, stored: string): boolean {
  // Digests of equal length, compared in constant time; one-shot hashes (no Hash object per password).
  const digest = (text: string) => hash('sha256', normalizePassword(text), 'buffer');
  return timingSafeEqual(digest(given), digest(stored));
}

/**
 * What makes `password` unusable, or undefined: empty, a NUL, too long, or what SASLprep (RFC 4013)
 * prohibits. A password being set is a stored string (unassigned code points refused); one being checked
 * is a query (RFC 3454 §7).
 */
function passwordProblem(password: string, use: 'stored' | 'query' = 'query'): string | undefined {
  if (typeof password !== 'string' || password === '') return 'password is empty';
  if (password.includes('\0')) return 'password contains a NUL character, which is not allowed';
  const length = [...password].length;
  if (length > MAX_PASSWORD_LENGTH) return `password is ${length} characters long, the limit is ${MAX_PASSWORD_LENGTH}`;
  const prohibited = passwordProhibition(password, use);
  if (prohibited) return `password ${prohibited}`;
  return undefined;
}

function checkPasswordArgument(password: string): void {
  const problem = passwordProblem(password, 'stored');
  if (problem) throw badArgument('password', problem);
}

function accountExists({ user, host }: { user: string; host: string }) {
  return conflict(`account ${user}@${host} already exists`);
}

function accountMissing({ user, host }: { user: string; host: string }) {
  return notFound(`account ${user}@${host} does not exist`);
}


async function mapConcurrently<T, R>(items: readonly T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
