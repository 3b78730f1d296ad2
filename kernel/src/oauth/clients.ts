/**
 * Registered OAuth clients: implicit clients with their exact redirect URI, password clients with a secret
 * (stored as a scrypt hash), and how oauth_client_id_check applies to them.
 */
import type { Knex } from 'knex';
import { conflict, notFound } from '@service/plugin-api';
import { badArgument } from '@service/plugin-api';
import { isUniqueViolation } from '@service/plugin-api';
import { CLIENTS_TABLE } from './migrations.js';
import { hashSecret, verifySecret } from './secrets.js';

export interface OAuthClient {
  readonly clientId: string;
  readonly clientName: string;
  readonly grantType: 'implicit' | 'password';
  readonly redirectUri?: string;
  readonly hasSecret: boolean;
}

interface Row {
  client_id: string;
  client_name: string;
  grant_type: string;
  redirect_uri: string | null;
  secret_hash: string | null;
}

function clientOf(row: Row): OAuthClient {
  return {
    clientId: row.client_id,
    clientName: row.client_name,
    grantType: row.grant_type === 'password' ? 'password' : 'implicit',
    redirectUri: row.redirect_uri ?? undefined,
    hasSecret: row.secret_hash !== null,
  };
}

/**
 * What is wrong with a redirect URI, or undefined when it is acceptable: an absolute URL without fragment,
 * http(s) to a host name or an IP address, or a native application's private-use scheme, which RFC 8252 §7.1
 * writes as a reverse domain name (`com.example.app:/cb`). A scheme without a dot is refused: that is every
 * scheme a browser runs or reads itself (javascript:, data:, vbscript:, file:, blob:, about:, filesystem:…),
 * and a private-use scheme that is not a domain name is one any application may claim.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect_uri '${uri}' is not an absolute URL`;
  }
  if (url.hash || uri.includes('#')) return 'redirect_uri must not have a fragment (#…)';
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    // The URL parser lets through hosts no name service has (a;b, a"b): refused, as they could not be reached
    // and would not fit in the Content-Security-Policy of the pages either.
    if (!/^([a-z0-9_-]+\.)*[a-z0-9_-]+\.?$|^\[[0-9a-f:.]+\]$/.test(url.hostname)) return `redirect_uri host '${url.hostname}' is not a host name or an IP address`;
    if (url.username || url.password) return 'redirect_uri must not hold a user name or password';
    return undefined;
  }
  if (!/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)) {
    return `redirect_uri scheme '${url.protocol}' is not allowed: use https:, http: or a private-use scheme named after a domain, like com.example.app:`;
  }
  return undefined;
}

export function checkRedirectUri(uri: string): void {
  const problem = redirectUriProblem(uri);
  if (problem) throw badArgument('redirect_uri', problem);
}

export class ClientRegistry {
  constructor(private readonly db: () => Knex) {}

  async addImplicit(clientId: string, clientName: string, redirectUri: string): Promise<void> {
    checkRedirectUri(redirectUri);
    await this.#insert({ client_id: clientId, client_name: clientName, grant_type: 'implicit', redirect_uri: redirectUri, secret_hash: null });
  }

  async addPassword(clientId: string, clientName: string, secret: string): Promise<void> {
    if (!secret) throw badArgument('secret', 'the secret must not be empty');
    await this.#insert({ client_id: clientId, client_name: clientName, grant_type: 'password', redirect_uri: null, secret_hash: await hashSecret(secret) });
  }

  async #insert(row: Row): Promise<void> {
    if (!row.client_id) throw badArgument('client_id', 'client_id must not be empty');
    // MariaDB compares keys ignoring trailing spaces (PAD SPACE), whatever the collation: 'app ' would be 'app'.
    if (row.client_id.trim() !== row.client_id) throw badArgument('client_id', `client_id must not begin or end with a space, got '${row.client_id}'`);
    if (/[\u0000-\u001f\u007f]/.test(row.client_id)) throw badArgument('client_id', 'client_id must not hold control characters');
    try {
      await this.db()(CLIENTS_TABLE).insert({ ...row, created_at: Date.now() });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(`OAuth client '${row.client_id}' already exists`);
      throw err;
    }
  }

  async remove(clientId: string): Promise<void> {
    const row = await this.#row(clientId);
    const deleted = row ? await this.db()(CLIENTS_TABLE).where({ client_id: row.client_id }).delete() : 0;
    if (!deleted) throw notFound(`no OAuth client '${clientId}'`);
  }

  /**
   * The row of exactly this client id. The database's answer is checked again: MariaDB matches 'app ' to
   * 'app' under every collation it has by default, and a client id is a credential's name.
   */
  async #row(clientId: string): Promise<Row | undefined> {
    const rows: Row[] = await this.db()(CLIENTS_TABLE).where({ client_id: clientId });
    return rows.find((row) => row.client_id === clientId);
  }

  async get(clientId: string): Promise<OAuthClient | undefined> {
    const row = await this.#row(clientId);
    return row ? clientOf(row) : undefined;
  }

  /** The client with its secret's hash, for oidc-provider (which hands the hash back to compareSecret). */
  async getWithSecret(clientId: string): Promise<(OAuthClient & { secretHash?: string }) | undefined> {
    const row = await this.#row(clientId);
    return row ? { ...clientOf(row), secretHash: row.secret_hash ?? undefined } : undefined;
  }

  /** True when the client exists and the secret is its own (a client without secret accepts none). */
  async verifySecret(clientId: string, secret: string | undefined): Promise<boolean> {
    const row = await this.#row(clientId);
    if (!row) return false;
    if (row.secret_hash === null) return secret === undefined || secret === '';
    return secret !== undefined && (await verifySecret(secret, row.secret_hash));
  }

  async list(): Promise<OAuthClient[]> {
    const rows: Row[] = await this.db()(CLIENTS_TABLE).orderBy('client_id');
    return rows.map(clientOf);
  }
}
