/**
 * The session directory modules see (`services.xmpp.sessions`): this node's session manager merged with
 * the session sources modules register (a cluster peer's sessions), this node's first. The kernel itself
 * keeps using the synchronous session manager (streams, the router's default delivery); this asynchronous
 * view exists so that sessions living elsewhere can be added without changing a module.
 *
 * This node's answer is read when the lookup is called, before anything is awaited: with no source
 * registered, a lookup answers exactly what the session manager held at the call. Sources are asked
 * together; one that fails is logged and counts as having no sessions.
 */
import type { C2SSession, SessionDirectory, SessionSource } from '@service/plugin-api';
import type { Logger } from '../../log/logger.js';
import type { SessionManager } from './session-manager.js';

interface Registered {
  readonly source: SessionSource;
  readonly owner: string;
}

export class MergedSessionDirectory implements SessionDirectory {
  /** Replaced, never changed in place: a lookup under way keeps the sources it started with. */
  #sources: readonly Registered[] = [];

  constructor(
    private readonly local: SessionManager,
    private readonly logger: Logger,
  ) {}

  /** Whether any source is registered (without one, every answer is this node's, synchronously known). */
  get hasSources(): boolean {
    return this.#sources.length > 0;
  }

  addSource(source: SessionSource, owner: string): void {
    this.#sources = [...this.#sources, { source, owner }];
  }

  removeOwner(owner: string): void {
    this.#sources = this.#sources.filter((s) => s.owner !== owner);
  }

  async get(full: string): Promise<C2SSession | undefined> {
    const local = this.local.get(full);
    if (local || this.#sources.length === 0) return local;
    const found = await this.#ask('get', (s) => s.get(full), undefined);
    return found.find((session) => session !== undefined);
  }

  async byAccount(bare: string): Promise<C2SSession[]> {
    const local = this.local.byAccount(bare);
    if (this.#sources.length === 0) return local;
    return merged(local, await this.#ask('byAccount', (s) => s.byAccount(bare), []));
  }

  /**
   * `byAccount` without waiting, when every source can answer so (the workers' table can; a cluster's
   * directory cannot): undefined otherwise. The router's delivery to an account reads it first.
   */
  byAccountNow(bare: string): C2SSession[] | undefined {
    const local = this.local.byAccount(bare);
    const sources = this.#sources;
    if (sources.length === 0) return local;
    const remote: C2SSession[][] = [];
    for (const { source, owner } of sources) {
      if (!source.byAccountNow) return undefined;
      try {
        remote.push(source.byAccountNow(bare));
      } catch (err) {
        this.#sourceFailed(owner, 'byAccount', err);
      }
    }
    return merged(local, remote);
  }

  async accounts(): Promise<string[]> {
    const local = [...this.local.accounts()];
    if (this.#sources.length === 0) return local;
    const remote = await this.#ask('accounts', (s) => s.accounts(), []);
    return [...new Set([...local, ...remote.flat()])];
  }

  async all(): Promise<C2SSession[]> {
    const local = [...this.local.all()];
    if (this.#sources.length === 0) return local;
    return withoutLocalDuplicates(local, await this.#ask('all', (s) => s.all(), []));
  }

  async count(): Promise<number> {
    const local = this.local.count;
    if (this.#sources.length === 0) return local;
    return sum(local, await this.#ask('count', (s) => s.count(), 0));
  }

  async countHost(host: string): Promise<number> {
    const local = this.local.countHost(host);
    if (this.#sources.length === 0) return local;
    return sum(local, await this.#ask('countHost', (s) => s.countHost(host), 0));
  }

  #sourceFailed(owner: string, question: string, err: unknown): void {
    this.logger.warn({ err, module: owner, question }, 'a session source of %s failed; its sessions are left out', owner);
  }

  /** Every source's answer, in registration order; `fallback` for one that fails. */
  #ask<T>(question: string, ask: (source: SessionSource) => Promise<T>, fallback: T): Promise<T[]> {
    const one = async ({ source, owner }: Registered): Promise<T> => {
      try {
        return await ask(source);
      } catch (err) {
        this.#sourceFailed(owner, question, err);
        return fallback;
      }
    };
    const sources = this.#sources;
    // One source (a cluster) is the usual case: no Promise.all on the routing path.
    if (sources.length === 1) return one(sources[0]!).then((answer) => [answer]);
    return Promise.all(sources.map(one));
  }
}

/** An account's sessions: this node's, then the sources'. */
function merged(local: C2SSession[], remote: C2SSession[][]): C2SSession[] {
  // The usual answers, without building a set: the account is on this node only, or on one source only.
  if (remote.every((sessions) => sessions.length === 0)) return local;
  if (local.length === 0 && remote.length === 1) return remote[0]!;
  return withoutLocalDuplicates(local, remote);
}

/** This node's sessions, then the sources' whose full JID is not one of them (nor listed before). */
function withoutLocalDuplicates(local: C2SSession[], remote: C2SSession[][]): C2SSession[] {
  const seen = new Set(local.map((s) => s.jid.full));
  const out = [...local];
  for (const session of remote.flat()) {
    if (seen.has(session.jid.full)) continue;
    seen.add(session.jid.full);
    out.push(session);
  }
  return out;
}

function sum(local: number, remote: number[]): number {
  return remote.reduce((total, n) => total + n, local);
}
