/**
 * What mod_private offers other modules and the admin commands (private_get, private_set, the ban
 * details of ban_account): the stored element of an account by namespace.
 */
import { badArgument, x, type XmlElement } from '@service/kernel';
import { accountKey } from '@service/kernel';
import { namespaceProblem } from './namespaces.js';
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
}

export function privateStorageApi(store: PrivateStore): PrivateStorageApi {
  return {
    get: (user, host, ns) => store.get(accountKey(user, host), ns),
    async getOrEmpty(user, host, name, ns) {
      return (await store.get(accountKey(user, host), ns)) ?? x(name, { xmlns: ns });
    },
    async set(user, host, element) {
      const account = accountKey(user, host);
      const problem = namespaceProblem(element);
      if (problem) throw badArgument('element', problem);
      await store.set(account, [element]);
    },
    delete: (user, host, ns) => store.delete(accountKey(user, host), ns),
    namespaces: (user, host) => store.namespaces(accountKey(user, host)),
    problem: namespaceProblem,
  };
}
