/**
 * How nodes hand each other work for their sessions: a Redis stream per node (`inbox:<node>`). A sender
 * appends (XADD); the node reads its own stream with a blocking XREAD on a dedicated connection and
 * deletes what it handled. A stream rather than pub/sub: what was sent to a node that died before reading
 * it is still there, so the node that cleans up after it can route those stanzas again instead of losing
 * them (docs/decisions.md, "Cluster").
 */
import type { Redis } from 'ioredis';
import type { Logger, TakeMessage, TakenMessage } from '@service/plugin-api';
import type { ClusterKeys } from './keys.js';
import type { AnswerEntry, CallEntry } from './node-calls.js';

export type InboxEntry =
  | { readonly kind: 'deliver'; readonly to: string; readonly xml: string }
  | { readonly kind: 'send'; readonly to: string; readonly xml: string }
  | { readonly kind: 'close'; readonly to: string; readonly condition: string; readonly text: string }
  /** The node is asked to leave the cluster (leave_cluster run on another node). */
  | { readonly kind: 'leave'; readonly to: string }
  /** A resumption on another node (the plugin API's SessionHandover). */
  | TakeMessage
  | TakenMessage
  /** A call to one of this node's channels, and the answer to one this node made (node-calls.ts). */
  | CallEntry
  | AnswerEntry;

/** The most entries a node's inbox keeps; beyond that the oldest go (a node that long behind is dead). */
const MAX_LENGTH = 1_000_000;

/**
 * Appends entries to a node's inbox only while its heartbeat key lives, in one step: once the key has
 * expired, the node that cleans up after it drains the inbox, and nothing may be added after that, where
 * nobody would ever read it. KEYS: inbox, alive key; ARGV: max length, then the entries (encodeEntry).
 */
const SEND_IF_ALIVE = `
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
for i = 2, #ARGV do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[i]) end
return 1`;

/** The most entries one script call carries; more wait for the next call. */
const MAX_BATCH = 500;

interface Outgoing {
  readonly encoded: string;
  readonly settle: (added: boolean | Error) => void;
}

export class Inbox {
  #stopped = false;
  #loop?: Promise<void>;

  constructor(
    private readonly redis: Redis,
    private readonly blocking: Redis,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly handle: (entry: InboxEntry) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Empties this node's inbox (what a previous run of the node left is for sessions that are gone) and reads it from now on. */
  async start(): Promise<void> {
    await this.redis.del(this.keys.inbox(this.node));
    await this.blocking.connect().catch(() => {}); // ioredis keeps trying; the loop waits for it.
    this.#loop = this.#read();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.blocking.disconnect();
    await this.#loop?.catch(() => {});
  }

  /**
   * Appends an entry to a node's inbox; resolves false when that node is dead (its heartbeat expired), so
   * the entry was not added. Rejects when Redis cannot take it. What is sent to one node in one turn of the
   * event loop goes in one script call, in order: one command per burst, not one per stanza.
   */
  send(node: string, entry: InboxEntry): Promise<boolean> {
    return new Promise((resolve, reject) => this.post(node, entry, (added) => (added instanceof Error ? reject(added) : resolve(added))));
  }

  /** send, with a callback instead of a promise (the routing path: one fewer allocation per stanza). */
  post(node: string, entry: InboxEntry, settle: (added: boolean | Error) => void): void {
    let queue = this.#outgoing.get(node);
    if (!queue) this.#outgoing.set(node, (queue = []));
    queue.push({ encoded: encodeEntry(entry), settle });
    if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => this.#flush());
    }
  }

  readonly #outgoing = new Map<string, Outgoing[]>();
  #flushing = false;

  #flush(): void {
    this.#flushing = false;
    for (const [node, queue] of this.#outgoing) {
      this.#outgoing.delete(node);
      for (let start = 0; start < queue.length; start += MAX_BATCH) {
        const batch = queue.slice(start, start + MAX_BATCH);
        const args: string[] = [String(MAX_LENGTH)];
        for (const { encoded } of batch) args.push(encoded);
        // Calls to one node go out in order on one connection, so its entries stay in the order sent.
        this.redis.eval(SEND_IF_ALIVE, 2, this.keys.inbox(node), this.keys.alive(node), ...args).then(
          (added) => batch.forEach((o) => o.settle(added === 1)),
          (err: Error) => batch.forEach((o) => o.settle(err)),
        );
      }
    }
  }

  async #handleInOrder(entries: readonly InboxEntry[]): Promise<void> {
    for (const entry of entries) {
      try {
        await this.handle(entry);
      } catch (err) {
        this.logger.error({ err, kind: entry.kind, to: entry.to }, 'handling a cluster inbox entry failed');
      }
    }
  }

  /** What a dead node had not read yet, oldest first; its inbox is deleted. */
  async drain(node: string): Promise<InboxEntry[]> {
    const key = this.keys.inbox(node);
    const entries = await this.redis.xrange(key, '-', '+');
    await this.redis.del(key);
    return entries.map(([, fields]) => entryOf(fields)).filter((e): e is InboxEntry => e !== undefined);
  }

  async #read(): Promise<void> {
    const key = this.keys.inbox(this.node);
    let last = '0';
    while (!this.#stopped) {
      let batch: Array<[string, Array<[string, string[]]>]> | null;
      try {
        batch = (await this.blocking.xread('COUNT', 500, 'BLOCK', 1000, 'STREAMS', key, last)) as typeof batch;
      } catch (err) {
        if (this.#stopped) return;
        this.logger.warn({ err: (err as Error).message }, 'reading the cluster inbox failed: %s', (err as Error).message);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      const items = batch?.[0]?.[1] ?? [];
      // In order for each session, and the sessions side by side: an entry that waits (a privacy list
      // read from the database) holds up only what follows it for the same session. The batch is done
      // before the next is read, so the order holds across batches too.
      const bySession = new Map<string, InboxEntry[]>();
      for (const [id, fields] of items) {
        last = id;
        const entry = entryOf(fields);
        if (!entry) continue;
        const queue = bySession.get(entry.to);
        if (queue) queue.push(entry);
        else bySession.set(entry.to, [entry]);
      }
      const handled: Array<Promise<void>> = [];
      for (const queue of bySession.values()) handled.push(this.#handleInOrder(queue));
      await Promise.all(handled);
      if (items.length) await this.redis.xdel(key, ...items.map(([id]) => id)).catch(() => {});
    }
  }
}

/**
 * An entry as one string: its kind, its address and the rest, one per line, the last part free text (a
 * stanza, a reason, a session as JSON). One field per stream entry: what Redis and the client library
 * handle per entry is one string, not six. JIDs, node names and ids hold no line break.
 */
export function encodeEntry(entry: InboxEntry): string {
  switch (entry.kind) {
    case 'deliver':
    case 'send':
      return `${entry.kind}\n${entry.to}\n${entry.xml}`;
    case 'close':
      return `close\n${entry.to}\n${entry.condition}\n${entry.text}`;
    case 'leave':
      return `leave\n${entry.to}`;
    case 'take':
      return `take\n${entry.to}\n${entry.id}\n${entry.from}\n${entry.ref}`;
    case 'taken':
      return `taken\n${entry.to}\n${entry.ref}\n${entry.session}`;
    case 'call':
      return `call\n${entry.to}\n${entry.from}\n${entry.id}\n${entry.name}\n${entry.payload}`;
    case 'answer':
      return `answer\n${entry.to}\n${entry.id}\n${entry.answer}`;
  }
}

/** The entry of a stream entry's fields; undefined for what this version does not know. */
export function entryOf(fields: string[]): InboxEntry | undefined {
  const text = fields[0] === 'e' ? fields[1] : undefined;
  if (text === undefined) return undefined;
  const parts = (count: number): string[] | undefined => {
    const out: string[] = [];
    let from = 0;
    for (let i = 0; i < count - 1; i++) {
      const end = text.indexOf('\n', from);
      if (end === -1) return undefined;
      out.push(text.slice(from, end));
      from = end + 1;
    }
    out.push(text.slice(from));
    return out;
  };
  const kind = text.slice(0, text.indexOf('\n'));
  if (kind === 'deliver' || kind === 'send') {
    const [, to, xml] = parts(3) ?? [];
    return to && xml !== undefined ? { kind, to, xml } : undefined;
  }
  if (kind === 'close') {
    const [, to, condition, reason] = parts(4) ?? [];
    return to && condition ? { kind, to, condition, text: reason ?? '' } : undefined;
  }
  if (kind === 'take') {
    const [, to, id, from, ref] = parts(5) ?? [];
    return to && id && from && ref ? { kind, to, id, from, ref } : undefined;
  }
  if (kind === 'taken') {
    const [, to, ref, session] = parts(4) ?? [];
    return to && ref && session !== undefined ? { kind, to, ref, session } : undefined;
  }
  if (kind === 'call') {
    const [, to, from, id, name, payload] = parts(6) ?? [];
    return to && from && id && name && payload !== undefined ? { kind, to, from, id: Number(id), name, payload } : undefined;
  }
  if (kind === 'answer') {
    const [, to, id, answer] = parts(4) ?? [];
    return to && id && answer !== undefined ? { kind, to, id: Number(id), answer } : undefined;
  }
  if (text.startsWith('leave\n')) return { kind: 'leave', to: text.slice(6) };
  return undefined;
}
