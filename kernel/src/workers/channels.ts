/**
 * Modules' channels between the worker processes of this node (the plugin API's ProcessesApi): the handlers
 * the running modules registered here, tagged by owner and removed when their module stops, and the calls
 * this process made to another one, waiting for their answers. A call to this process runs the handler in
 * place; one to another worker goes over the workers' link (worker-link.ts) as a `call` message and comes
 * back as an `answer`. With one process (no workers) only the first kind exists. A cluster's calls between
 * nodes (NodesApi) end here too: a node runs what another node asks with `call(self, …)`.
 */
import { ChannelError, PendingCalls, answerOf, type ChannelAnswer, type ChannelRegistration, type ChannelValue, type ProcessesApi, valueOf } from '@service/plugin-api';

export type { ChannelAnswer } from '@service/plugin-api';

/** How a call reaches another worker: false when it cannot be sent (that worker is not connected). */
export type ChannelSender = (index: number, call: { id: number; name: string; payload: ChannelValue }) => boolean;

export class ProcessChannels implements ProcessesApi {
  readonly #handlers = new Map<string, { readonly handler: ChannelRegistration['handler']; readonly owner: string }>();
  readonly #pending = new PendingCalls<number>();
  #sender?: ChannelSender;

  constructor(
    readonly self: number,
    readonly count: number,
  ) {}

  /** The workers' link sends calls to other workers (none with one process). */
  connect(sender: ChannelSender): void {
    this.#sender = sender;
  }

  register(channel: ChannelRegistration, owner: string): void {
    const existing = this.#handlers.get(channel.name);
    if (existing) throw new Error(`channel ${channel.name} is already registered by ${existing.owner}`);
    this.#handlers.set(channel.name, { handler: channel.handler, owner });
  }

  removeOwner(owner: string): void {
    for (const [name, entry] of this.#handlers) if (entry.owner === owner) this.#handlers.delete(name);
  }

  async call(index: number, name: string, payload: ChannelValue): Promise<ChannelValue> {
    if (!Number.isInteger(index) || index < 1 || index > this.count) throw new ChannelError(`there is no process ${index} (this node runs ${this.count})`, 'unreachable');
    return valueOf(index === this.self ? await this.answer(name, payload, this.self) : await this.#remote(index, name, payload));
  }

  /** Runs a call made here or by another worker; never throws (a handler's error is the answer). */
  answer(name: string, payload: ChannelValue, from: number): Promise<ChannelAnswer> {
    const entry = this.#handlers.get(name);
    if (!entry) return Promise.resolve({ ok: false, message: `no channel ${name} runs in process ${this.self}`, errorName: 'unreachable' });
    return answerOf(() => entry.handler(payload, from));
  }

  /** The answer to a call this process made. */
  settle(id: number, answer: ChannelAnswer): void {
    this.#pending.settle(id, answer);
  }

  /** A worker is gone: the calls waiting for it fail now rather than at their timeout. */
  peerGone(index: number): void {
    this.#pending.gone(index, `worker ${index} is gone`);
  }

  #remote(index: number, name: string, payload: ChannelValue): Promise<ChannelAnswer> {
    return this.#pending.open(index, name, (id) => this.#sender?.(index, { id, name, payload }) ?? false);
  }
}
