/**
 * The SASL mechanism contract (RFC 6120 §6). The stream offers the registered mechanisms that apply to it
 * and runs the chosen one's exchange; modules add mechanisms (the server's OAuth service adds X-OAUTH2 and
 * OAUTHBEARER this way) without touching the stream code.
 */
import type { AccountsApi } from '../services/accounts.js';

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
    /**
     * The account whose password (or SCRAM proof) was checked and found wrong: such a failure counts
     * towards failed-login limits. Failures before any check (a malformed message, an unsupported channel
     * binding) leave it undefined and count for nothing.
     */
    readonly wrongCredentialsFor?: string,
  ) {
    super(text ?? condition);
    this.name = 'SaslFailure';
  }
}

/**
 * tls-unique (RFC 5929) exists on TLS 1.2 only; tls-exporter (RFC 9266) on TLS 1.3 only here (on 1.2 it is
 * unsafe without the extended master secret, which Node cannot confirm); tls-server-end-point on both.
 */
export type ChannelBindingType = 'tls-unique' | 'tls-exporter' | 'tls-server-end-point';

/** The connection a stream runs on, as mechanisms see it when the stream decides what to offer. */
export interface SaslConnection {
  /** The domain the client connected to. */
  readonly host: string;
  readonly secure: boolean;
  readonly ip: string;
  /** The channel bindings this connection supports, best first. */
  readonly channelBindings: readonly ChannelBindingType[];
  channelBinding(type: ChannelBindingType): Buffer | undefined;
}

/** What a mechanism may know about the stream it runs on. */
export interface SaslPeer extends SaslConnection {
  /**
   * What this stream's features announced: the SASL mechanisms, and the channel-binding types of XEP-0440
   * (empty when it announced none). SCRAM signs them into its exchange (XEP-0474) and judges a client's
   * `y` flag by them.
   */
  readonly advertised: { readonly mechanisms: readonly string[]; readonly channelBindings: readonly ChannelBindingType[] };
}

export interface SaslServices {
  readonly accounts: AccountsApi;
  /**
   * Called by a mechanism once it knows which account a password attempt is for, before it checks anything:
   * throws a SaslFailure when failed-login limits refuse that account from this address, so a blocked
   * guesser learns nothing.
   */
  admit(user: string): void;
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
  offered(connection: SaslConnection): boolean;
  start(peer: SaslPeer, services: SaslServices): SaslExchange;
}
