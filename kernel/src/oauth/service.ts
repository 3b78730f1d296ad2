/**
 * `service_oauth`: tokens, clients, scope checks and the oauth_access rule, in one place for every
 * frontend that issues or accepts tokens (commands, /oauth, the HTTP API, XML-RPC, SASL).
 */
import type { CachesApi } from '@service/plugin-api';
import type { Knex } from 'knex';
import type { AccessControl } from '../access/access-control.js';
import type { CommandRegistry } from '../commands/registry.js';
import { CommandError } from '@service/plugin-api';
import type { Logger } from '../log/logger.js';
import type { ScopeRegistry } from '../modules/scopes.js';
import { ClientRegistry } from './clients.js';
import { ModelStore } from './provider/model-store.js';
import { allScopes, checkScopes, isScope } from './scopes.js';
import type { CacheMark } from '../caches/cache-epoch.js';
import { TokenService, mayObtainTokens, type TokenSettings, type VerifiedToken } from './token-service.js';

/** A bearer token resolved: its owner and scopes, the record, and the mark its look-up was made under. */
export interface ResolvedBearer {
  readonly account: { user: string; host: string } | undefined;
  readonly scopes: readonly string[];
  readonly tokenId: string;
  readonly record: VerifiedToken;
  readonly mark: CacheMark | undefined;
}

/** Token kinds that authenticate a request (refresh tokens only buy new access tokens). */
const BEARER_KINDS = new Set(['access', 'client_credentials']);

export interface OAuthSettings extends TokenSettings {
  /** oauth_access: the access rule saying who may obtain tokens. */
  readonly access: string;
  /** oauth_client_id_check: allow (any client_id), db (a registered client), deny (none). */
  readonly clientIdCheck: 'allow' | 'db' | 'deny';
}

export class OAuthService {
  readonly tokens: TokenService;
  readonly clients: ClientRegistry;
  /** oidc-provider's sessions, grants, codes and interactions. */
  readonly models: ModelStore;

  constructor(
    db: () => Knex,
    private readonly settings: () => OAuthSettings,
    private readonly scopes: ScopeRegistry,
    private readonly commands: CommandRegistry,
    private readonly access: () => AccessControl,
    logger: Logger,
    caches?: CachesApi,
  ) {
    this.tokens = new TokenService(db, settings, logger, caches);
    this.clients = new ClientRegistry(db);
    this.models = new ModelStore(db);
  }

  get clientIdCheck(): OAuthSettings['clientIdCheck'] {
    return this.settings().clientIdCheck;
  }

  /** The scopes, checked: throws InvalidScope naming the unknown ones. */
  checkScopes(scopes: readonly string[]): string[] {
    return checkScopes(scopes, this.scopes, this.commands);
  }

  isScope(name: string): boolean {
    return isScope(name, this.scopes, this.commands);
  }

  /** Every scope a token may carry now: the declared ones, then one per loaded command callable with a token. */
  allScopes(): string[] {
    return allScopes(this.scopes, this.commands);
  }

  /** What a scope lets a token do, in a sentence, for the consent page. */
  describeScope(scope: string): string {
    const decl = this.scopes.get(scope);
    if (decl) return decl.desc;
    const command = this.commands.resolve(scope)?.decl;
    return command ? `Run the command ${scope}: ${command.desc}` : 'Unknown scope.';
  }

  /** oauth_access for an account (and the caller's address, for ip rules). */
  mayObtainTokens(account: { user: string; host: string }, ip?: string): boolean {
    return mayObtainTokens(this.access(), this.settings().access, account, ip);
  }

  /** Why oauth_access refuses the account tokens, naming the rule; undefined when it allows them. */
  accessRefusal(account: { user: string; host: string }, ip?: string): string | undefined {
    if (this.mayObtainTokens(account, ip)) return undefined;
    return `${account.user}@${account.host} is not allowed to obtain OAuth tokens on this server (oauth_access: ${this.settings().access})`;
  }

  /**
   * Removes a client and everything issued to it: its tokens, and the codes, grants and interactions of
   * the code flow, so that a client registered later under the same id cannot redeem any of them.
   */
  async removeClient(clientId: string): Promise<void> {
    await this.clients.remove(clientId);
    await this.tokens.revokeWhere({ clientId });
    await this.models.removeClient(clientId);
  }

  /** Ends everything an account holds: its tokens, and its sign-in sessions, grants and codes of the code flow. */
  async removeAccount(account: { user: string; host: string }): Promise<void> {
    await this.tokens.revokeWhere({ account });
    await this.models.removeAccount(account);
  }

  /**
   * For Authorization: Bearer — the token's owner and scopes, or an `unauthorized` error. A client_credentials
   * token has no owner: it speaks for its client, and api_permissions decide what that may do.
   */
  async resolveBearer(token: string): Promise<ResolvedBearer> {
    // Taken before the look-up: a revocation that lands while it runs ends the mark.
    const mark = this.tokens.mark();
    const record = token ? await this.tokens.verify(token) : undefined;
    if (!record || !BEARER_KINDS.has(record.kind)) throw new CommandError('unauthorized', 'Oauth Token is invalid or expired.');
    if (!record.account && record.kind === 'access') throw new CommandError('unauthorized', 'this token belongs to no account');
    return { account: record.account, scopes: record.scopes, tokenId: record.id, record, mark };
  }

  /**
   * Whether a token resolved earlier still stands without being looked up again (the HTTP authenticator
   * keeps it per connection): see TokenService.stillValid. False when it was resolved without a mark.
   */
  bearerStillValid(resolved: ResolvedBearer): boolean {
    return resolved.mark !== undefined && this.tokens.stillValid(resolved.record, resolved.mark);
  }
}
