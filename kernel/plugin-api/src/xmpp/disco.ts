/**
 * What service discovery (XEP-0030) announces: features and identities of the server and of accounts.
 * Modules add theirs when they start, whether or not mod_disco (which answers the queries) runs.
 */
export type DiscoScope = 'server' | 'account';

export interface DiscoIdentity {
  readonly category: string;
  readonly type: string;
  readonly name?: string;
}

export interface DiscoRegistration {
  readonly scope: DiscoScope;
  readonly features?: readonly string[];
  readonly identities?: readonly DiscoIdentity[];
}
