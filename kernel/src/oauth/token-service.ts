/**
 * The `service_oauth` token service: issue, verify, list, revoke and purge bearer tokens. Every flow (the
 * oauth_issue_token command, the authorization form, the token endpoint, oidc-provider's flows) stores its
 * tokens here, so they are listed, revoked and introspected the same way.
 */
import type { CachesApi } from '@service/plugin-api';
import type { Knex } from 'knex';
import type { AccessControl } from '../access/access-control.js';
import { CommandError } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';
import { TOKENS_TABLE } from './migrations.js';
import { newToken, newTokenId, tokenHash } from './secrets.js';
import type { CacheMark } from '../caches/cache-epoch.js';
import { TokenCache, type CacheSettings } from './token-cache.js';

export interface TokenRecord {
  readonly id: string;
  readonly kind: string;
  readonly account: { readonly user: string; readonly host: string } | undefined;
  readonly clientId: string | undefined;
  readonly scopes: readonly string[];
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly grantId?: string;
  /** A refresh token already exchanged (rotation): presenting it again revokes its grant. */
  readonly consumed?: boolean;
}

export interface IssuedToken {
  readonly token: string;
  readonly id: string;
  readonly scopes: readonly string[];
  /** Seconds. */
  readonly expiresIn: number;
}

export interface TokenSettings {
  /** oauth_expire: the default lifetime and the cap on requested ones, in seconds. */
  readonly expire: number;
  readonly cache: CacheSettings;
}

/** What oidc-provider stores for a token (accountId is `user@host`, times in epoch seconds). */
export type ProviderTokenPayload = Record<string, unknown> & {
  accountId?: string;
  clientId?: string;
  scope?: string;
  iat?: number;
  exp?: number;
  grantId?: string;
  jti?: string;
};

function accountOf(accountId: string): { user: string; host: string } | undefined {
  const at = accountId.lastIndexOf('@');
  return at > 0 ? { user: accountId.slice(0, at), host: accountId.slice(at + 1) } : undefined;
}

interface Row {
  token_hash: string;
  id: string;
  kind: string;
  username: string | null;
  host: string | null;
  client_id: string | null;
  scope: string;
  created_at: number | string;
  expires_at: number | string;
  last_used_at: number | string | null;
  grant_id: string | null;
  payload: string | null;
}

/** last_used_at is written at most this often per token: a bearer call must not mean a database write. */
const TOUCH_INTERVAL_MS = 60_000;

function recordOf(row: Row): TokenRecord {
  return {
    id: row.id,
    kind: row.kind,
    account: row.username && row.host ? { user: row.username, host: row.host } : undefined,
    clientId: row.client_id ?? undefined,
    scopes: row.scope.split(' ').filter(Boolean),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    grantId: row.grant_id ?? undefined,
    consumed: row.payload ? (JSON.parse(row.payload) as { consumed?: unknown }).consumed !== undefined : undefined,
  };
}

/** A record as `verify` returns it: with when its use was last recorded. */
export type VerifiedToken = TokenRecord & { touchedAt: number };

/** The token look-up cache's name among the shared caches. */
export const TOKENS_CACHE = 'oauth_tokens';

export class TokenService {
  readonly #cache: TokenCache<VerifiedToken>;

  constructor(
    private readonly db: () => Knex,
    private readonly settings: () => TokenSettings,
    private readonly logger: Logger,
    /** Carries what the look-up cache forgets to the other nodes of a cluster, and theirs here. */
    private readonly caches?: CachesApi,
  ) {
    this.#cache = new TokenCache(() => this.settings().cache);
    caches?.register(TOKENS_CACHE, (hash) => (hash === undefined ? this.#cache.clear() : this.#cache.delete(hash)));
  }

  /** Forgets a token's look-up here and on every node (revoked, consumed). */
  async #forget(hash: string): Promise<void> {
    this.#cache.delete(hash);
    await this.caches?.changed(TOKENS_CACHE, hash);
  }

  /** The lifetime a request gets: its ttl (when given) capped by oauth_expire, in seconds. */
  lifetime(ttl: number | undefined): number {
    const max = this.settings().expire;
    if (ttl === undefined) return max;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new CommandError('bad_argument', `ttl must be a positive number of seconds, got ${ttl}`, 'ttl');
    return Math.min(ttl, max);
  }

  async issue(options: { account?: { user: string; host: string }; scopes: readonly string[]; ttl?: number; clientId?: string; kind?: string; grantId?: string }): Promise<IssuedToken> {
    const token = newToken();
    const id = newTokenId();
    const seconds = this.lifetime(options.ttl);
    const now = Date.now();
    await this.db()(TOKENS_TABLE).insert({
      token_hash: tokenHash(token),
      id,
      kind: options.kind ?? 'access',
      username: options.account?.user ?? null,
      host: options.account?.host ?? null,
      client_id: options.clientId ?? null,
      scope: options.scopes.join(' '),
      created_at: now,
      expires_at: now + seconds * 1000,
      last_used_at: null,
      grant_id: options.grantId ?? null,
    });
    this.logger.info({ tokenId: id, owner: options.account ? `${options.account.user}@${options.account.host}` : undefined, client: options.clientId, scopes: options.scopes, seconds }, 'OAuth token issued');
    return { token, id, scopes: options.scopes, expiresIn: seconds };
  }

  /** A mark to take before `verify`, for a caller that keeps the record (see `stillValid`); undefined when the look-up cache is off. */
  mark(): CacheMark | undefined {
    return this.#cache.mark();
  }

  /**
   * Whether a record `verify` returned after `mark` still stands without a look-up: the look-up cache would
   * still hold it (no revocation since, within its lifetime), the token has not expired, and no use is due to be
   * recorded (then `verify` must run, which records it).
   */
  stillValid(record: VerifiedToken, mark: CacheMark): boolean {
    const now = Date.now();
    return this.#cache.trusts(mark, now) && record.expiresAt > now && now - record.touchedAt <= TOUCH_INTERVAL_MS;
  }

  /** The token's record when it exists and has not expired; undefined otherwise. */
  async verify(token: string): Promise<VerifiedToken | undefined> {
    const hash = tokenHash(token);
    const now = Date.now();
    const cached = this.#cache.get(hash, now);
    let record = cached?.value;
    if (!cached) {
      const row: Row | undefined = await this.db()(TOKENS_TABLE).where({ token_hash: hash }).first();
      record = row ? { ...recordOf(row), touchedAt: Number(row.last_used_at ?? 0) } : undefined;
      this.#cache.set(hash, record, now);
    }
    if (!record || record.expiresAt <= now) return undefined;
    if (now - record.touchedAt > TOUCH_INTERVAL_MS) {
      record.touchedAt = now;
      this.db()(TOKENS_TABLE).where({ token_hash: hash }).update({ last_used_at: now }).catch((err: unknown) => this.logger.debug({ err }, 'could not record token use'));
    }
    return record;
  }

  /**
   * Stores a token oidc-provider issued (or updates it, keeping its public id): filed under the hash of its
   * value like any other, with the model's payload beside it — minus the value itself (`jti`).
   */
  async storeProviderToken(kind: string, value: string, payload: ProviderTokenPayload): Promise<void> {
    const { jti: _jti, ...rest } = payload;
    const account = typeof payload.accountId === 'string' ? accountOf(payload.accountId) : undefined;
    const hash = tokenHash(value);
    const now = Date.now();
    const row = {
      token_hash: hash,
      id: newTokenId(),
      kind,
      username: account?.user ?? null,
      host: account?.host ?? null,
      client_id: typeof payload.clientId === 'string' ? payload.clientId : null,
      scope: typeof payload.scope === 'string' ? payload.scope : '',
      created_at: typeof payload.iat === 'number' ? payload.iat * 1000 : now,
      expires_at: typeof payload.exp === 'number' ? payload.exp * 1000 : now + this.settings().expire * 1000,
      last_used_at: null,
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      payload: JSON.stringify(rest),
    };
    await this.db()(TOKENS_TABLE).insert(row).onConflict('token_hash').merge(['scope', 'expires_at', 'payload']);
    await this.#forget(hash);
    if (kind !== 'refresh') {
      this.logger.info({ tokenId: row.id, kind, owner: account ? `${account.user}@${account.host}` : undefined, client: row.client_id, scopes: row.scope }, 'OAuth token issued');
    }
  }

  /** The payload of a token oidc-provider issued, with its value back as `jti`; undefined for any other. */
  async findProviderToken(kind: string, value: string): Promise<ProviderTokenPayload | undefined> {
    const row: Row | undefined = await this.db()(TOKENS_TABLE).where({ token_hash: tokenHash(value), kind }).first();
    if (!row?.payload) return undefined;
    return { ...(JSON.parse(row.payload) as ProviderTokenPayload), jti: value };
  }

  /** Marks a refresh token used: presented again, oidc-provider revokes its whole grant (rotation). */
  async consumeProviderToken(value: string): Promise<void> {
    const hash = tokenHash(value);
    const row: Pick<Row, 'payload'> | undefined = await this.db()(TOKENS_TABLE).select('payload').where({ token_hash: hash }).first();
    if (!row?.payload) return;
    const payload = { ...(JSON.parse(row.payload) as ProviderTokenPayload), consumed: Math.floor(Date.now() / 1000) };
    await this.db()(TOKENS_TABLE).where({ token_hash: hash }).update({ payload: JSON.stringify(payload) });
    await this.#forget(hash);
  }

  /** The record of a token by its value, expired or not, bypassing the cache (revocation, introspection). */
  async lookup(value: string): Promise<TokenRecord | undefined> {
    const row: Row | undefined = await this.db()(TOKENS_TABLE).where({ token_hash: tokenHash(value) }).first();
    return row ? recordOf(row) : undefined;
  }

  /** Revokes by the token's value only (never by public id): what a client holding the token may do. */
  async revokeValue(value: string): Promise<boolean> {
    const hash = tokenHash(value);
    const deleted = await this.db()(TOKENS_TABLE).where({ token_hash: hash }).delete();
    await this.#forget(hash);
    return deleted > 0;
  }

  /** Revokes by the token itself or by its public id; false when there is no such token. */
  async revoke(tokenOrId: string): Promise<boolean> {
    const hash = tokenHash(tokenOrId);
    // Checked again here: a database that compares text loosely (MariaDB ignores trailing spaces) must not
    // make another string an id.
    const rows: Array<Pick<Row, 'token_hash' | 'id'>> = await this.db()(TOKENS_TABLE).select('token_hash', 'id').where({ token_hash: hash }).orWhere({ id: tokenOrId });
    const row = rows.find((r) => r.token_hash === hash || r.id === tokenOrId);
    if (!row) return false;
    await this.db()(TOKENS_TABLE).where({ token_hash: row.token_hash }).delete();
    await this.#forget(row.token_hash);
    this.logger.info({ tokenHashPrefix: row.token_hash.slice(0, 8) }, 'OAuth token revoked');
    return true;
  }

  /** Revokes every token of a grant, a client or an account (logout, client removal, account removal). */
  async revokeWhere(where: { grantId?: string; clientId?: string; account?: { user: string; host: string } }): Promise<number> {
    const query = this.db()(TOKENS_TABLE);
    if (where.grantId) query.where({ grant_id: where.grantId });
    else if (where.clientId) query.where({ client_id: where.clientId });
    else if (where.account) query.where({ username: where.account.user, host: where.account.host });
    else return 0;
    const rows: Array<Pick<Row, 'token_hash'>> = await query.clone().select('token_hash');
    if (!rows.length) return 0;
    await this.db()(TOKENS_TABLE).whereIn('token_hash', rows.map((r) => r.token_hash)).delete();
    for (const row of rows) await this.#forget(row.token_hash);
    return rows.length;
  }

  async list(now = Date.now()): Promise<Array<TokenRecord & { lastUsedAt?: number }>> {
    const rows: Row[] = await this.db()(TOKENS_TABLE).where('expires_at', '>', now).orderBy('created_at');
    return rows.map((row) => ({ ...recordOf(row), lastUsedAt: row.last_used_at === null ? undefined : Number(row.last_used_at) }));
  }

  /** Deletes expired tokens; returns how many. */
  async purgeExpired(now = Date.now()): Promise<number> {
    const deleted = await this.db()(TOKENS_TABLE).where('expires_at', '<=', now).delete();
    if (deleted) this.logger.debug({ deleted }, 'expired OAuth tokens purged');
    return deleted;
  }

  clearCache(): void {
    this.#cache.clear();
  }
}

/** Whether oauth_access lets an account obtain tokens. */
export function mayObtainTokens(access: AccessControl, rule: string, account: { user: string; host: string }, ip?: string): boolean {
  return access.matchRule(rule, { user: account.user, server: account.host, ip }) === 'allow';
}
