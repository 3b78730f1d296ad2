/**
 * What mod_private offers other modules and the admin commands (private_get, private_set, the ban
 * details of ban_account): the stored element of an account by namespace.
 */
import { badArgument, x, type XmlElement } from '@service/plugin-api';
import { accountKey, type AccountKey } from '@service/plugin-api';
import type { NamespacePolicy } from './namespaces.js';
import type { PrivateStore } from './store.js';

export interface PrivateStorageApi {
  /** The element stored under `ns`, or undefined. XEP-0049 looks data up by namespace only. */
  get(user: string, host: string, ns: string): Promise<XmlElement | undefined>;
  /** The stored element of `ns`, or the empty `<name xmlns=ns/>` (what an IQ get answers). */
  getOrEmpty(user: string, host: string, name: string, ns: string): Promise<XmlElement>;
  /**
   * Stores the element under its namespace, replacing what was there. Throws bad_argument (argument
   * `element`) for an element without a namespace of its own or in a reserved one.
   */
  set(user: string, host: string, element: XmlElement): Promise<void>;
  /** Removes what `ns` holds; false when it held nothing. */
  delete(user: string, host: string, ns: string): Promise<boolean>;
  /** The namespaces the account has data in, sorted. */
  namespaces(user: string, host: string): Promise<string[]>;
  /**
   * Why `element` cannot be stored or asked for (no namespace of its own, a reserved or too long one), or
   * undefined when it can: what `set` refuses, for callers that check a request before reading.
   */
  problem(element: XmlElement): string | undefined;
  /**
   * Claims `ns` for the server: from then on the account (its clients, private_get/private_set, and the
   * methods above) can neither read nor write it; only the returned handle can. Release it when the
   * claiming module stops.
   */
  claim(ns: string): ClaimedNamespace;
}

/** A namespace of private storage kept by the server for one purpose (ban details). */
export interface ClaimedNamespace {
  get(user: string, host: string): Promise<XmlElement | undefined>;
  /** Stores `element`, which must be in the claimed namespace. */
  set(user: string, host: string, element: XmlElement): Promise<void>;
  delete(user: string, host: string): Promise<boolean>;
  /** Every account holding an element of the namespace (the banned accounts, say). */
  accounts(): Promise<AccountKey[]>;
  release(): void;
}

export function privateStorageApi(store: PrivateStore, policy: NamespacePolicy): PrivateStorageApi {
  const open = (ns: string) => policy.problem(x('x', { xmlns: ns })) === undefined;
  return {
    get: async (user, host, ns) => (open(ns) ? store.get(accountKey(user, host), ns) : undefined),
    async getOrEmpty(user, host, name, ns) {
      return (open(ns) ? await store.get(accountKey(user, host), ns) : undefined) ?? x(name, { xmlns: ns });
    },
    async set(user, host, element) {
      const account = accountKey(user, host);
      const problem = policy.problem(element);
      if (problem) throw badArgument('element', problem);
      await store.set(account, [element]);
    },
    delete: async (user, host, ns) => open(ns) && store.delete(accountKey(user, host), ns),
    namespaces: async (user, host) => (await store.namespaces(accountKey(user, host))).filter(open),
    problem: (element) => policy.problem(element),
    claim(ns) {
      policy.claim(ns);
      return {
        get: (user, host) => store.get(accountKey(user, host), ns),
        async set(user, host, element) {
          if (element.ns !== ns) throw new Error(`the claimed namespace is ${ns}, not ${element.ns ?? 'none'}`);
          await store.set(accountKey(user, host), [element]);
        },
        delete: (user, host) => store.delete(accountKey(user, host), ns),
        accounts: () => store.accountsWith(ns),
        release: () => policy.release(ns),
      };
    },
  };
}
