/**
 * Calls between nodes' channels (NodesApi.call), through the nodes' inboxes: a `call` entry carries the
 * channel, the payload and the caller's id; the callee runs the channel with ProcessesApi.call on itself
 * and sends an `answer` entry back. The inbox reads its entries batch after batch; a call's handler runs
 * beside that loop (under a lock per ordering key, so calls with one key keep their order), so that a
 * handler waiting for another node never holds up the answers this node waits for.
 */
import { ChannelError, KeyedLock, PendingCalls, valueOf, type ChannelAnswer, type ChannelValue, type Logger, type ProcessesApi } from '@service/plugin-api';

export interface CallEntry {
  readonly kind: 'call';
  /** The ordering key: calls with the same one run one after the other. */
  readonly to: string;
  readonly from: string;
  readonly id: number;
  readonly name: string;
  readonly payload: string;
}

export interface AnswerEntry {
  readonly kind: 'answer';
  readonly to: string;
  readonly id: number;
  readonly answer: string;
}

export class NodeCalls {
  readonly #pending = new PendingCalls<string>();
  readonly #order = new KeyedLock();

  constructor(
    private readonly node: string,
    private readonly processes: ProcessesApi,
    private readonly send: (node: string, entry: CallEntry | AnswerEntry) => Promise<boolean>,
    private readonly logger: Logger,
  ) {}

  async call(node: string, name: string, payload: ChannelValue, order?: string): Promise<ChannelValue> {
    const answer = await this.#pending.open(node, name, (id) => {
      const entry: CallEntry = { kind: 'call', to: order === undefined ? `${this.node}#${id}` : `order:${order}`, from: this.node, id, name, payload: JSON.stringify(payload) };
      this.send(node, entry).then(
        (added) => added || this.#pending.settle(id, { ok: false, message: `node ${node} is not alive`, errorName: 'unreachable' }),
        (err: Error) => this.#pending.settle(id, { ok: false, message: `node ${node} cannot be reached: ${err.message}`, errorName: 'unreachable' }),
      );
      return true;
    });
    return valueOf(answer);
  }

  /** A call from another node: runs beside the inbox loop, in order with the calls of the same key. */
  onCall(entry: CallEntry): void {
    void this.#order.run(entry.to, async () => {
      const answer = await this.#run(entry);
      const sent = await this.send(entry.from, { kind: 'answer', to: `answer#${entry.id}`, id: entry.id, answer: JSON.stringify(answer) }).catch(() => false);
      if (!sent) this.logger.warn({ node: entry.from, channel: entry.name }, 'the answer of %s could not be sent back to node %s', entry.name, entry.from);
    });
  }

  /** The channel's answer here; a handler's error keeps its name and kind (ChannelError carries them). */
  async #run(entry: CallEntry): Promise<ChannelAnswer> {
    try {
      return { ok: true, value: await this.processes.call(this.processes.self, entry.name, JSON.parse(entry.payload) as ChannelValue) };
    } catch (err) {
      if (err instanceof ChannelError) return { ok: false, message: err.message, errorName: err.errorName, ...(err.kind ? { errorKind: err.kind } : {}) };
      return { ok: false, message: (err as Error).message, errorName: (err as Error).name };
    }
  }

  onAnswer(entry: AnswerEntry): void {
    let answer: ChannelAnswer;
    try {
      answer = JSON.parse(entry.answer) as ChannelAnswer;
    } catch {
      answer = { ok: false, message: 'the answer could not be read', errorName: 'unreachable' };
    }
    this.#pending.settle(entry.id, answer);
  }

  /** A node died: the calls waiting for it fail now. */
  nodeGone(node: string): void {
    this.#pending.gone(node, `node ${node} is gone`);
  }
}
