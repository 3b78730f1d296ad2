/**
 * The spam filter of one virtual host: what is blocked (the list files, the domains added by command, the
 * domains each real-time block list publishes), what always passes (whitelisted domains), the spam filter
 * cache, and the verdict on one incoming stanza. Pure state and decisions: reading files, enforcing,
 * dumping and carrying changes to the other processes are done elsewhere.
 */
import { createHash } from 'node:crypto';
import { Jid } from '@service/plugin-api';
import { SpamCache, type CacheEntry } from './cache.js';
import { EMPTY_LISTS, normalizeUrl, type SpamLists } from './lists.js';

const URL_IN_TEXT = /https?:\/\/[^\s<>"']+/gi;
const JID_IN_TEXT = /\S+@\S+/g;

/** The URLs of a text, as the URL list holds them (trailing punctuation that ends a sentence dropped). */
export function urlsIn(text: string): string[] {
  const out: string[] = [];
  for (const match of text.match(URL_IN_TEXT) ?? []) {
    for (const candidate of [match, match.replace(/[.,;:!?)\]}]+$/, '')]) {
      try {
        out.push(normalizeUrl(new URL(candidate)));
      } catch {
        // not a URL after all
      }
    }
  }
  return out;
}

function jidsIn(text: string): string[] {
  const out: string[] = [];
  for (const match of text.match(JID_IN_TEXT) ?? []) {
    const jid = Jid.tryParse(match.replace(/[.,;:!?)\]}]+$/, ''));
    if (jid?.user !== undefined) out.push(jid.bare);
  }
  return out;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export class HostFilter {
  #lists: SpamLists = EMPTY_LISTS;
  /** Domains of the domains file still blocked (remove_blocked_domain takes one out until the next reload). */
  #fileDomains = new Set<string>();
  readonly #added = new Set<string>();
  /** Per RTBL service (`host node`), the item ids it publishes: domains, or their SHA-256. */
  readonly #rtbl = new Map<string, Set<string>>();
  readonly cache: SpamCache;

  constructor(
    readonly host: string,
    cacheSize: number,
  ) {
    this.cache = new SpamCache(cacheSize);
  }

  setLists(lists: SpamLists): void {
    this.#lists = lists;
    this.#fileDomains = new Set(lists.domains);
  }

  get lists(): SpamLists {
    return this.#lists;
  }

  isWhitelisted(domain: string): boolean {
    return this.#lists.whitelist.has(domain);
  }

  isBlockedDomain(domain: string): boolean {
    if (this.isWhitelisted(domain)) return false;
    if (this.#fileDomains.has(domain) || this.#added.has(domain)) return true;
    let hashed: string | undefined;
    for (const ids of this.#rtbl.values()) {
      if (ids.has(domain)) return true;
      hashed ??= sha256(domain);
      if (ids.has(hashed)) return true;
    }
    return false;
  }

  /** The blocked domains (whitelisted ones left out), sorted; RTBL items are listed as published. */
  blockedDomains(): string[] {
    const all = new Set([...this.#fileDomains, ...this.#added]);
    for (const ids of this.#rtbl.values()) for (const id of ids) all.add(id);
    return [...all].filter((d) => !this.isWhitelisted(d)).sort();
  }

  /** add_blocked_domain; false when it was already blocked by command. */
  addDomain(domain: string): boolean {
    if (this.#added.has(domain)) return false;
    this.#added.add(domain);
    return true;
  }

  /** The domains add_blocked_domain added (what a starting process takes over from a running one). */
  addedDomains(): string[] {
    return [...this.#added].sort();
  }

  /** remove_blocked_domain: out of every source until it is added, reloaded or published again; false when it was in none. */
  removeDomain(domain: string): boolean {
    let removed = this.#added.delete(domain);
    removed = this.#fileDomains.delete(domain) || removed;
    for (const ids of this.#rtbl.values()) removed = ids.delete(domain) || removed;
    return removed;
  }

  /** An RTBL service's items: `replace` sets them all (the fetched list), else adds and removes. */
  updateRtbl(service: string, change: { replace?: readonly string[]; add?: readonly string[]; remove?: readonly string[] }): void {
    let ids = this.#rtbl.get(service);
    if (!ids || change.replace) {
      ids = new Set(change.replace ?? []);
      this.#rtbl.set(service, ids);
    }
    for (const id of change.add ?? []) ids.add(id);
    for (const id of change.remove ?? []) ids.delete(id);
  }

  dropRtbl(service: string): void {
    this.#rtbl.delete(service);
  }

  rtblServices(): string[] {
    return [...this.#rtbl.keys()];
  }

  /**
   * Why a message or subscription request from `from` (with the message's body, if any) would be refused,
   * changing nothing; undefined when it passes. A whitelisted domain always passes; a cached sender is
   * refused at once; then a listed JID, a blocked domain, a listed URL or JID in the body.
   */
  verdict(from: Jid, body: string | undefined): { reason: string; cached: boolean } | undefined {
    if (this.isWhitelisted(from.host)) return undefined;
    if (this.cache.has(from.bare)) return { reason: 'sender in the spam filter cache', cached: true };
    const reason = this.#reason(from, body);
    return reason === undefined ? undefined : { reason, cached: false };
  }

  /** The stanza was refused: the sender's cache time is now; true when it entered the cache just now. */
  convict(from: Jid, cached: boolean, now: number): boolean {
    if (cached) {
      this.cache.touch(from.bare, now);
      return false;
    }
    return this.cache.add(from.bare, now);
  }

  #reason(from: Jid, body: string | undefined): string | undefined {
    if (this.#lists.jids.has(from.bare)) return 'sender JID listed';
    if (this.isBlockedDomain(from.host)) return `sender domain ${from.host} blocked`;
    if (!body) return undefined;
    if (this.#lists.urls.size) {
      const url = urlsIn(body).find((u) => this.#lists.urls.has(u));
      if (url) return `listed URL ${url} in the body`;
    }
    if (this.#lists.jids.size) {
      const jid = jidsIn(body).find((j) => this.#lists.jids.has(j));
      if (jid) return `listed JID ${jid} in the body`;
    }
    return undefined;
  }

  cacheEntries(): CacheEntry[] {
    return this.cache.entries();
  }
}
