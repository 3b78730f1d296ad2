/**
 * JIDs as routing handles them: parsed and normalized once (nodeprep, nameprep, resourceprep), with the
 * forms routing needs. Parsing is cached, bounded: the same few thousand addresses come back on every
 * stanza, and normalization is the costly part.
 */
import { InvalidJid, parseJid } from './prep.js';

export { InvalidJid };

export class Jid {
  readonly bare: string;
  readonly full: string;
  #bareJid: Jid | undefined;

  constructor(
    readonly user: string | undefined,
    readonly host: string,
    readonly resource: string | undefined,
  ) {
    this.bare = user !== undefined ? `${user}@${host}` : host;
    this.full = resource !== undefined ? `${this.bare}/${resource}` : this.bare;
  }

  /** Throws InvalidJid with a message that names the problem. */
  static parse(text: string): Jid {
    const cached = cache.get(text);
    if (cached) return cached;
    const { user, host, resource } = parseJid(text);
    const jid = new Jid(user, host, resource);
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(text, jid);
    return jid;
  }

  /** Parses, or undefined when the text is no valid JID. */
  static tryParse(text: string | undefined): Jid | undefined {
    if (text === undefined) return undefined;
    try {
      return Jid.parse(text);
    } catch {
      return undefined;
    }
  }

  get isBare(): boolean {
    return this.resource === undefined;
  }

  /** The bare JID; made once per full JID (routing asks for it several times per stanza). */
  toBare(): Jid {
    if (this.resource === undefined) return this;
    return (this.#bareJid ??= new Jid(this.user, this.host, undefined));
  }

  withResource(resource: string): Jid {
    return new Jid(this.user, this.host, resource);
  }

  equals(other: Jid | undefined): boolean {
    return other !== undefined && other.full === this.full;
  }

  toString(): string {
    return this.full;
  }
}

const CACHE_SIZE = 10_000;
const cache = new Map<string, Jid>();
