/**
 * oidc-provider's storage adapter. Its tokens (AccessToken, ClientCredentials, RefreshToken) go to the one
 * token store every flow shares, so they are verified on /api and in SASL, listed, revoked and introspected
 * like the tokens the ejabberd-style endpoints issue; its clients are the registered OAuth clients; its other
 * models (sessions, interactions, grants, codes) go to `oauth_models`. Every id is stored hashed.
 */
import { redirectUriProblem, type ClientRegistry, type OAuthClient } from '../clients.js';
import type { TokenService } from '../token-service.js';
import type { ModelStore, ProviderPayload } from './model-store.js';

/** oidc-provider's token models and the kinds the token store files them under. */
export const TOKEN_KINDS: Readonly<Record<string, string>> = {
  AccessToken: 'access',
  ClientCredentials: 'client_credentials',
  RefreshToken: 'refresh',
};

/** A registered client as oidc-provider sees it (the secret stays a hash; see compareClientSecret). */
export function clientMetadata(client: OAuthClient & { secretHash?: string }): Record<string, unknown> {
  if (client.grantType === 'implicit') {
    // A redirect URI stored before it would be refused (javascript:, data:…) is left out: no code goes there.
    const redirectUri = client.redirectUri && !redirectUriProblem(client.redirectUri) ? client.redirectUri : undefined;
    // A browser or native application: public, so the code flow needs PKCE. oidc-provider takes a private-use
    // scheme (com.example.app:/cb, RFC 8252 §7.1) only from a client of application_type native.
    const native = redirectUri !== undefined && !/^https?:/i.test(redirectUri);
    return {
      client_id: client.clientId,
      client_name: client.clientName,
      application_type: native ? 'native' : 'web',
      redirect_uris: redirectUri ? [redirectUri] : [],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }
  // A confidential client (it has a secret) acting for itself.
  return {
    client_id: client.clientId,
    client_name: client.clientName,
    client_secret: client.secretHash,
    token_endpoint_auth_method: 'client_secret_basic',
    redirect_uris: [],
    grant_types: ['client_credentials'],
    response_types: [],
  };
}

export interface AdapterDeps {
  readonly tokens: () => TokenService;
  readonly clients: () => ClientRegistry;
  readonly models: ModelStore;
  /** oauth_client_id_check: 'deny' closes every flow. */
  readonly clientsAllowed: () => boolean;
}

export interface ProviderAdapter {
  upsert(id: string, payload: ProviderPayload, expiresIn?: number): Promise<void>;
  find(id: string): Promise<ProviderPayload | undefined>;
  findByUid(uid: string): Promise<ProviderPayload | undefined>;
  findByUserCode(userCode: string): Promise<ProviderPayload | undefined>;
  consume(id: string): Promise<void>;
  destroy(id: string): Promise<void>;
  revokeByGrantId(grantId: string): Promise<void>;
}

export function adapterClass(deps: AdapterDeps): new (model: string) => ProviderAdapter {
  return class Adapter implements ProviderAdapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: ProviderPayload, expiresIn?: number): Promise<void> {
      const kind = TOKEN_KINDS[this.model];
      if (kind) return deps.tokens().storeProviderToken(kind, id, payload);
      if (this.model === 'Client') throw new Error('clients are registered with oauth_add_client_implicit or oauth_add_client_password');
      return deps.models.upsert(this.model, id, payload, expiresIn);
    }

    async find(id: string): Promise<ProviderPayload | undefined> {
      const kind = TOKEN_KINDS[this.model];
      if (kind) return deps.tokens().findProviderToken(kind, id);
      if (this.model === 'Client') {
        if (!deps.clientsAllowed()) return undefined;
        const client = await deps.clients().getWithSecret(id);
        return client ? clientMetadata(client) : undefined;
      }
      return deps.models.find(this.model, id);
    }

    async findByUid(uid: string): Promise<ProviderPayload | undefined> {
      return deps.models.findByUid(this.model, uid);
    }

    async findByUserCode(): Promise<ProviderPayload | undefined> {
      return undefined; // The device flow is not enabled.
    }

    async consume(id: string): Promise<void> {
      if (TOKEN_KINDS[this.model]) return deps.tokens().consumeProviderToken(id);
      return deps.models.consume(this.model, id);
    }

    async destroy(id: string): Promise<void> {
      if (TOKEN_KINDS[this.model]) {
        await deps.tokens().revoke(id);
        return;
      }
      return deps.models.destroy(this.model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (TOKEN_KINDS[this.model]) {
        await deps.tokens().revokeWhere({ grantId });
        return;
      }
      return deps.models.revokeByGrantId(grantId);
    }
  };
}
