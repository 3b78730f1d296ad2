/**
 * Storage of oidc-provider's short-lived models other than tokens — interactions, sessions, grants,
 * authorization codes — in `oauth_models`. Ids are stored as SHA-256 hashes: an authorization code or a
 * session id read from a database dump is worth nothing. Each row also names its account and client, so
 * that removing either ends what was issued for it.
 */
import type { Knex } from 'knex';
import { MODELS_TABLE } from '../migrations.js';
import { tokenHash } from '../secrets.js';

export type ProviderPayload = Record<string, unknown> & { grantId?: string; uid?: string; exp?: number; jti?: string };

interface Row {
  model: string;
  id_hash: string;
  payload: string;
  expires_at: number | string | null;
  grant_id: string | null;
  uid: string | null;
  username: string | null;
  host: string | null;
  client_id: string | null;
}

/** The account (`user@host`) and client a model belongs to: top-level in grants and codes, nested in interactions. */
function owners(payload: ProviderPayload): { account?: { user: string; host: string }; clientId?: string } {
  const session = payload.session as { accountId?: unknown } | undefined;
  const params = payload.params as { client_id?: unknown } | undefined;
  const accountId = typeof payload.accountId === 'string' ? payload.accountId : session?.accountId;
  const clientId = typeof payload.clientId === 'string' ? payload.clientId : params?.client_id;
  const at = typeof accountId === 'string' ? accountId.lastIndexOf('@') : -1;
  return {
    account: at > 0 ? { user: (accountId as string).slice(0, at), host: (accountId as string).slice(at + 1) } : undefined,
    clientId: typeof clientId === 'string' ? clientId : undefined,
  };
}

export class ModelStore {
  constructor(private readonly db: () => Knex) {}

  async upsert(model: string, id: string, payload: ProviderPayload, expiresIn: number | undefined): Promise<void> {
    const { jti: _jti, ...rest } = payload;
    const { account, clientId } = owners(payload);
    const row: Row = {
      model,
      id_hash: tokenHash(id),
      payload: JSON.stringify(rest),
      expires_at: expiresIn === undefined ? null : Date.now() + expiresIn * 1000,
      grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
      uid: typeof payload.uid === 'string' ? payload.uid : null,
      username: account?.user ?? null,
      host: account?.host ?? null,
      client_id: clientId ?? null,
    };
    await this.db()(MODELS_TABLE).insert(row).onConflict(['model', 'id_hash']).merge(['payload', 'expires_at', 'grant_id', 'uid', 'username', 'host', 'client_id']);
  }

  async find(model: string, id: string): Promise<ProviderPayload | undefined> {
    const row: Row | undefined = await this.db()(MODELS_TABLE).where({ model, id_hash: tokenHash(id) }).first();
    return row ? this.#live(row, id) : undefined;
  }

  async findByUid(model: string, uid: string): Promise<ProviderPayload | undefined> {
    // Exactly this uid, whatever the database's collation makes of trailing spaces.
    const row = ((await this.db()(MODELS_TABLE).where({ model, uid })) as Row[]).find((r) => r.uid === uid);
    // The id is not stored, only its hash; sessions found by uid carry their id in the payload (`jti`).
    return row ? this.#live(row, undefined) : undefined;
  }

  async consume(model: string, id: string): Promise<void> {
    const found = await this.find(model, id);
    if (!found) return;
    const { jti: _jti, ...rest } = found;
    await this.db()(MODELS_TABLE)
      .where({ model, id_hash: tokenHash(id) })
      .update({ payload: JSON.stringify({ ...rest, consumed: Math.floor(Date.now() / 1000) }) });
  }

  async destroy(model: string, id: string): Promise<void> {
    await this.db()(MODELS_TABLE).where({ model, id_hash: tokenHash(id) }).delete();
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db()(MODELS_TABLE).where({ grant_id: grantId }).whereNot({ model: 'Grant' }).delete();
  }

  /** Ends an account's sign-in sessions, grants, codes and interactions in progress. */
  async removeAccount(account: { user: string; host: string }): Promise<number> {
    return this.db()(MODELS_TABLE).where({ username: account.user, host: account.host }).delete();
  }

  /**
   * Removes a client's codes, grants and interactions. Sign-in sessions are the person's, not the client's:
   * they stay, and what they recorded for the client points at grants that no longer exist.
   */
  async removeClient(clientId: string): Promise<number> {
    return this.db()(MODELS_TABLE).where({ client_id: clientId }).whereNot({ model: 'Session' }).delete();
  }

  async purgeExpired(now = Date.now()): Promise<number> {
    return this.db()(MODELS_TABLE).where('expires_at', '<=', now).delete();
  }

  #live(row: Row, id: string | undefined): ProviderPayload | undefined {
    if (row.expires_at !== null && Number(row.expires_at) <= Date.now()) return undefined;
    const payload = JSON.parse(row.payload) as ProviderPayload;
    return id === undefined ? payload : { ...payload, jti: id };
  }
}
