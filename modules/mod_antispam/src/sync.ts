/**
 * Carries mod_antispam's changes to the server's other processes: the other workers of this node
 * (`services.processes`) and, with mod_cluster, the other nodes (`services.nodes`), over one channel.
 * What travels: a sender that entered the spam filter cache, the cache commands, blocked domains added or
 * removed, a reload of the list files, and what a real-time block list published or retracted. Each process
 * applies what it receives to its own filters and tells nobody (no echo). A process that cannot be reached
 * is logged and left out: it keeps its own lists and cache.
 */
import type { ChannelRegistration, ChannelValue, Logger, NodesApi, ProcessesApi } from '@service/plugin-api';

export const CHANGE_CHANNEL = 'mod_antispam:change';
export const STATE_CHANNEL = 'mod_antispam:state';

export type Change =
  | { readonly op: 'cache_add'; readonly host: string; readonly jid: string; readonly timestamp: number }
  | { readonly op: 'cache_drop'; readonly host: string; readonly jid: string }
  | { readonly op: 'cache_expire'; readonly host: string; readonly seconds: number; readonly now: number }
  | { readonly op: 'domain_add'; readonly host: string; readonly domain: string }
  | { readonly op: 'domain_remove'; readonly host: string; readonly domain: string }
  | { readonly op: 'reload'; readonly host: string }
  | {
      readonly op: 'rtbl';
      readonly host: string;
      readonly service: string;
      readonly replace?: readonly string[];
      readonly add?: readonly string[];
      readonly remove?: readonly string[];
    };

/** What a process that starts asks another for: per host, the cache and the domains added by command. */
export type Snapshot = Readonly<Record<string, { readonly cache: ReadonlyArray<{ jid: string; timestamp: number }>; readonly added: readonly string[] }>>;

const strings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** A change as the channel carries it, or undefined when the payload is not one. */
export function changeOf(payload: ChannelValue): Change | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const p = payload as Record<string, unknown>;
  if (typeof p.host !== 'string') return undefined;
  switch (p.op) {
    case 'cache_add':
      return typeof p.jid === 'string' && typeof p.timestamp === 'number' ? { op: p.op, host: p.host, jid: p.jid, timestamp: p.timestamp } : undefined;
    case 'cache_drop':
      return typeof p.jid === 'string' ? { op: p.op, host: p.host, jid: p.jid } : undefined;
    case 'cache_expire':
      return typeof p.seconds === 'number' && typeof p.now === 'number' ? { op: p.op, host: p.host, seconds: p.seconds, now: p.now } : undefined;
    case 'domain_add':
    case 'domain_remove':
      return typeof p.domain === 'string' ? { op: p.op, host: p.host, domain: p.domain } : undefined;
    case 'reload':
      return { op: 'reload', host: p.host };
    case 'rtbl':
      if (typeof p.service !== 'string') return undefined;
      if ((p.replace !== undefined && !strings(p.replace)) || (p.add !== undefined && !strings(p.add)) || (p.remove !== undefined && !strings(p.remove))) return undefined;
      return { op: 'rtbl', host: p.host, service: p.service, replace: p.replace as string[] | undefined, add: p.add as string[] | undefined, remove: p.remove as string[] | undefined };
    default:
      return undefined;
  }
}

export class Propagation {
  constructor(
    private readonly processes: ProcessesApi,
    private readonly nodes: NodesApi,
    private readonly logger: Logger,
  ) {}

  /** The channels the other processes call: a change to apply, a request for this process's state. */
  channels(apply: (change: Change) => Promise<void> | void, snapshot: () => Snapshot): ChannelRegistration[] {
    return [
      {
        name: CHANGE_CHANNEL,
        handler: async (payload) => {
          const change = changeOf(payload);
          if (!change) return false;
          await apply(change);
          return true;
        },
      },
      { name: STATE_CHANNEL, handler: () => snapshot() as unknown as ChannelValue },
    ];
  }

  /** Sends a change to every other process; resolves once each answered or was given up on. */
  async send(change: Change): Promise<void> {
    const payload = change as unknown as ChannelValue;
    const calls: Promise<unknown>[] = [];
    for (let index = 1; index <= this.processes.count; index++) {
      if (index === this.processes.self) continue;
      calls.push(this.processes.call(index, CHANGE_CHANNEL, payload).catch((err: unknown) => this.#lost(`worker ${index}`, change, err)));
    }
    for (const node of this.#otherNodes()) {
      calls.push(this.nodes.call(node, CHANGE_CHANNEL, payload).catch((err: unknown) => this.#lost(`node ${node}`, change, err)));
    }
    await Promise.all(calls);
  }

  /** The state of another running process (a worker, else a node), for one that starts; undefined when alone or unreachable. */
  async fetchState(): Promise<Snapshot | undefined> {
    const other = this.processes.count > 1 ? (this.processes.self === 1 ? 2 : 1) : undefined;
    try {
      if (other !== undefined) return (await this.processes.call(other, STATE_CHANNEL, null)) as unknown as Snapshot;
      const node = this.#otherNodes()[0];
      if (node !== undefined) return (await this.nodes.call(node, STATE_CHANNEL, null)) as unknown as Snapshot;
    } catch (err) {
      this.logger.debug({ err }, 'mod_antispam: no state from another process (it may be starting too)');
    }
    return undefined;
  }

  #lost(where: string, change: Change, err: unknown): void {
    this.logger.warn({ err, op: change.op, host: change.host }, 'mod_antispam: %s was not told of a %s change', where, change.op);
  }

  #otherNodes(): string[] {
    if (!this.nodes.clustered()) return [];
    return this.nodes.live().filter((node) => node !== this.nodes.self);
  }
}
