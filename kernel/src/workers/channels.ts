/**
 * Modules' channels between the worker processes of this node (the plugin API's ProcessesApi): the handlers
 * the running modules registered here, tagged by owner and removed when their module stops, and the calls
 * this process made to another one, waiting for their answers. A call to this process runs the handler in
 * place; one to another worker goes over the workers' link (worker-link.ts) as a `call` message and comes
 * back as an `answer`. With one process (no workers) only the first kind exists.
 */
import { ChannelError, type ChannelRegistration, type ChannelValue, type ProcessesApi } from '@service/plugin-api';

/** How long a call waits for the other process's answer. */
const CALL_TIMEOUT_MS = 30_000;

/** What travels between workers for a call (see messages.ts). */
export type ChannelAnswer =
  | { readonly ok: true; readonly value: ChannelValue }
  | { readonly ok: false; readonly message: string; readonly errorName: string; readonly errorKind?: string };

/** How a call reaches another worker: false when it cannot be sent (that worker is not connected). */
export type ChannelSender = (index: number, call: { id: number; name: string; payload: ChannelValue }) => boolean;

export class ProcessChannels implements ProcessesApi {
  readonly #handlers = new Map<string, { readonly handler: ChannelRegistration['handler']; readonly owner: string }>();
  readonly #pending = new Map<number, { readonly index: number; readonly settle: (answer: ChannelAnswer) => void }>();
  #nextId = 1;
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
    const answer = index === this.self ? await this.answer(name, payload, this.self) : await this.#remote(index, name, payload);
    if (answer.ok) return answer.value;
    throw new ChannelError(answer.message, answer.errorName, answer.errorKind);
  }

  /** Runs a call made here or by another worker; never throws (a handler's error is the answer). */
  async answer(name: string, payload: ChannelValue, from: number): Promise<ChannelAnswer> {
    const entry = this.#handlers.get(name);
    if (!entry) return { ok: false, message: `no channel ${name} runs in process ${this.self}`, errorName: 'unreachable' };
    try {
      return { ok: true, value: (await entry.handler(payload, from)) ?? null };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      const kind = (error as { kind?: unknown }).kind;
      return { ok: false, message: error.message, errorName: error.name, ...(typeof kind === 'string' ? { errorKind: kind } : {}) };
    }
  }

  /** The answer to a call this process made. */
  settle(id: number, answer: ChannelAnswer): void {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    pending?.settle(answer);
  }

  /** A worker is gone: the calls waiting for it fail now rather than at their timeout. */
  peerGone(index: number): void {
    for (const [id, pending] of this.#pending) {
      if (pending.index !== index) continue;
      this.#pending.delete(id);
      pending.settle({ ok: false, message: `worker ${index} is gone`, errorName: 'unreachable' });
    }
  }

  #remote(index: number, name: string, payload: ChannelValue): Promise<ChannelAnswer> {
    const id = this.#nextId++;
    return new Promise<ChannelAnswer>((resolve) => {
      const timer = setTimeout(() => this.settle(id, { ok: false, message: `worker ${index} did not answer ${name} within ${CALL_TIMEOUT_MS / 1000} s`, errorName: 'unreachable' }), CALL_TIMEOUT_MS);
      this.#pending.set(id, {
        index,
        settle: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      });
      if (!this.#sender?.(index, { id, name, payload })) this.settle(id, { ok: false, message: `worker ${index} cannot be reached`, errorName: 'unreachable' });
    });
  }
}
