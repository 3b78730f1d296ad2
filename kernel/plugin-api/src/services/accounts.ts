/**
 * The accounts of the server, as modules use them: names are prepared (nodeprep/nameprep) by the service,
 * and a host argument that is not served is a bad_argument naming it. Passwords are stored as salted SCRAM
 * keys unless the operator chose plain storage.
 */
export type ScramHash = 'sha1' | 'sha256' | 'sha512';

/** What SCRAM needs to check a proof for one hash: never enough to recover the password. */
export interface ScramCredential {
  readonly salt: Buffer;
  readonly iterations: number;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
}

export interface AccountsApi {
  /** Creates an account; a conflict when it exists, a bad_argument naming what is wrong with a part. */
  register(user: string, host: string, password: string): Promise<void>;
  /** Deletes the authentication record first, so the account cannot log in while modules clear its data. */
  unregister(user: string, host: string): Promise<void>;
  exists(user: string, host: string): Promise<boolean>;
  /** When the account was registered (epoch ms), or undefined when there is none. */
  registeredAt(user: string, host: string): Promise<number | undefined>;
  /**
   * The account named by command arguments, normalized, which must be registered on a served host: a name
   * that cannot be a JID part or a host not served here is a 400 naming the argument, an unknown account a 404.
   */
  existing(user: string, host: string): Promise<{ user: string; host: string }>;
  /** A host argument, normalized; a bad_argument naming `host` when it is not served here. */
  servedHost(host: string): string;
  /** Whether `password` logs the account in (and no `password_login_check` handler refuses it). */
  checkPassword(user: string, host: string, password: string): Promise<boolean>;
  /** Why the account may not log in although its password is right (a banned account), or undefined. */
  loginRefusal(user: string, host: string): Promise<string | undefined>;
  /** How the password is stored: in plain (never log it), as SCRAM keys, or undefined for a missing account. */
  storedPassword(user: string, host: string): Promise<{ format: 'plain'; password: string } | { format: 'scram' } | undefined>;
  setPassword(user: string, host: string, password: string): Promise<void>;
  /** User names of a host in byte order. */
  listUsers(host: string): Promise<string[]>;
  /** Accounts of one host, or of all served hosts. */
  countUsers(host?: string): Promise<number>;
  /** What SASL needs for one hash, or undefined when the account is missing or has no key for it. */
  getScramCredentials(user: string, host: string, hash: ScramHash): Promise<ScramCredential | undefined>;
}
