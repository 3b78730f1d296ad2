/**
 * The SASL mechanism contract (RFC 6120 §6). The stream offers the registered mechanisms that apply to it
 * and runs the chosen one's exchange; modules add mechanisms (the OAuth service adds X-OAUTH2 and
 * OAUTHBEARER) without touching the stream code.
 */
import type { AccountService } from '../../accounts/accounts.js';
import { brand } from '../../util/brand.js';

export type SaslCondition =
  | 'aborted'
  | 'account-disabled'
  | 'credentials-expired'
  | 'encryption-required'
  | 'incorrect-encoding'
  | 'invalid-authzid'
  | 'invalid-mechanism'
  | 'malformed-request'
  | 'mechanism-too-weak'
  | 'not-authorized'
  | 'temporary-auth-failure';

export class SaslFailure extends Error {
  constructor(
    readonly condition: SaslCondition,
    readonly text?: string,
  ) {
    super(text ?? condition);
    this.name = 'SaslFailure';
  }
}
brand(SaslFailure, 'SaslFailure');

export type ChannelBindingType = 'tls-exporter' | 'tls-server-end-point';

/** What a mechanism may know about the stream it runs on. */
export interface SaslPeer {
  /** The domain the client connected to. */
  readonly host: string;
  readonly secure: boolean;
  readonly ip: string;
  /** The channel bindings this connection supports, best first. */
  readonly channelBindings: readonly ChannelBindingType[];
  channelBinding(type: ChannelBindingType): Buffer | undefined;
  /** Whether -PLUS mechanisms are offered on this stream (a SCRAM client flag `y` is then a downgrade). */
  readonly plusOffered: boolean;
}

export interface SaslServices {
  readonly accounts: AccountService;
}

export interface SaslSuccess {
  /** The authenticated account's user name (local part) on `peer.host`. */
  readonly user: string;
  /** Sent in <success/> (SCRAM's server signature). */
  readonly additionalData?: Buffer;
}

export type SaslStep = { readonly challenge: Buffer } | { readonly success: SaslSuccess };

export interface SaslExchange {
  /** Called with the initial response (possibly empty), then with each response; throws SaslFailure. */
  step(response: Buffer): Promise<SaslStep>;
}

export interface SaslMechanism {
  readonly name: string;
  /**
   * The condition a response that is not base64 fails with: RFC 6120's incorrect-encoding unless the
   * mechanism's own rules say otherwise (the OAuth mechanisms answer every failure with not-authorized).
   */
  readonly encodingFailure?: SaslCondition;
  /** Whether to offer it on this stream. */
  offered(peer: SaslPeer): boolean;
  start(peer: SaslPeer, services: SaslServices): SaslExchange;
}

/** Registered mechanisms, in order of preference (the order they are offered in). */
export class SaslMechanisms {
  #mechanisms: Array<{ mechanism: SaslMechanism; owner: string; rank: number }> = [];

  register(mechanism: SaslMechanism, owner: string, rank = 50): void {
    if (this.#mechanisms.some((m) => m.mechanism.name === mechanism.name)) throw new Error(`SASL mechanism ${mechanism.name} is already registered`);
    this.#mechanisms = [...this.#mechanisms, { mechanism, owner, rank }].sort((a, b) => a.rank - b.rank);
  }

  removeOwner(owner: string): void {
    this.#mechanisms = this.#mechanisms.filter((m) => m.owner !== owner);
  }

  get(name: string): SaslMechanism | undefined {
    return this.#mechanisms.find((m) => m.mechanism.name === name)?.mechanism;
  }

  /** The mechanisms to offer on a stream: registered, applicable, and not disabled by the configuration. */
  offered(peer: SaslPeer, disabled: readonly string[]): SaslMechanism[] {
    const off = new Set(disabled.map((d) => d.toUpperCase()));
    return this.#mechanisms.map((m) => m.mechanism).filter((m) => !off.has(m.name) && m.offered(peer));
  }
}
