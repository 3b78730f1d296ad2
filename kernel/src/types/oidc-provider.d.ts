/**
 * The part of oidc-provider (v9, which ships no types) the kernel uses. See kernel/src/oauth/provider/.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface InteractionDetails {
    readonly uid: string;
    readonly prompt: { readonly name: string; readonly reasons: readonly string[] };
    readonly params: Readonly<Record<string, unknown>>;
    readonly session?: { readonly accountId: string };
    readonly grantId?: string;
  }

  export interface GrantInstance {
    readonly accountId?: string;
    readonly clientId?: string;
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  /** A sign-in session at the authorization server (writes go through oidc-provider's proxy). */
  export interface SessionInstance {
    accountId?: string;
    /** Epoch seconds of the login. */
    loginTs?: number;
    authorizations?: Record<string, unknown>;
  }

  /** What oidc-provider keeps on a request's Koa context. */
  export interface OIDCContext {
    readonly route?: string;
    readonly params?: Readonly<Record<string, unknown>>;
    readonly client?: ClientInstance;
    readonly account?: { readonly accountId: string };
    readonly session?: SessionInstance;
  }

  /** oidc-provider's Koa context, as far as its hooks and our middleware use it. */
  export interface ProviderContext {
    readonly oidc?: OIDCContext;
    readonly req: IncomingMessage;
    readonly path: string;
    status: number;
    body: unknown;
    set(field: string, value: string): void;
  }

  export class OIDCProviderError extends Error {
    readonly error: string;
    error_description?: string;
    readonly error_detail?: string;
    readonly status: number;
    readonly statusCode: number;
  }

  export const errors: {
    readonly OIDCProviderError: typeof OIDCProviderError;
    readonly AccessDenied: new (description?: string, detail?: string) => OIDCProviderError;
    readonly CustomOIDCProviderError: new (error: string, description: string) => OIDCProviderError;
    readonly InvalidGrant: new (detail?: string) => OIDCProviderError;
    readonly InvalidRequest: new (description?: string, status?: number) => OIDCProviderError;
  };

  export class Check {
    static readonly REQUEST_PROMPT: true;
    static readonly NO_NEED_TO_PROMPT: false;
    constructor(reason: string, description: string, error: string, check: (ctx: ProviderContext) => boolean | Promise<boolean>);
  }

  export interface Prompt {
    readonly name: string;
    readonly checks: { add(check: Check, index?: number): void };
  }

  export const interactionPolicy: {
    readonly Check: typeof Check;
    base(): Prompt[] & { get(name: string): Prompt | undefined };
  };

  export interface ClientInstance {
    readonly clientId: string;
    readonly clientSecret?: string;
    grantTypeAllowed(type: string): boolean;
  }

  export interface ClientClass {
    prototype: { compareClientSecret(this: ClientInstance, actual: string): Promise<boolean> };
    find(id: string): Promise<ClientInstance | undefined>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    readonly issuer: string;
    readonly Client: ClientClass;
    readonly Grant: {
      new (properties: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<string>;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }
}
