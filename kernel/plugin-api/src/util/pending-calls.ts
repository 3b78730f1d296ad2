/**
 * Calls sent to another process or node, waiting for their answers: each gets an id to send with it; the
 * answer that comes back with that id settles it; a target that goes away, or the timeout, settles what
 * still waits for it with an 'unreachable' failure. The workers' channels and the cluster's node calls
 * both wait this way.
 */
import { ChannelError, type ChannelValue } from '../services/processes.js';

/** What comes back for a call: the handler's value, or what it threw. */
export type ChannelAnswer =
  | { readonly ok: true; readonly value: ChannelValue }
  | { readonly ok: false; readonly message: string; readonly errorName: string; readonly errorKind?: string };

/** How long a call waits for its answer. */
export const CALL_TIMEOUT_MS = 30_000;

export class PendingCalls<Target> {
  readonly #pending = new Map<number, { readonly target: Target; readonly settle: (answer: ChannelAnswer) => void }>();
  #nextId = 1;

  /**
   * Registers a call to `target` and hands its id to `send`, which sends it and says whether it could;
   * resolves with the answer (never rejects).
   */
  open(target: Target, name: string, send: (id: number) => boolean): Promise<ChannelAnswer> {
    const id = this.#nextId++;
    return new Promise<ChannelAnswer>((resolve) => {
      const timer = setTimeout(() => this.settle(id, unreachable(`${String(target)} did not answer ${name} within ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS);
      this.#pending.set(id, {
        target,
        settle: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      });
      if (!send(id)) this.settle(id, unreachable(`${String(target)} cannot be reached`));
    });
  }

  /** The answer to call `id` (ignored when it already timed out). */
  settle(id: number, answer: ChannelAnswer): void {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    pending?.settle(answer);
  }

  /** The target is gone: what waits for it fails now rather than at its timeout. */
  gone(target: Target, why: string): void {
    for (const [id, pending] of this.#pending) if (pending.target === target) this.settle(id, unreachable(why));
  }
}

export function unreachable(message: string): ChannelAnswer {
  return { ok: false, message, errorName: 'unreachable' };
}

/** Runs a channel handler and turns what it returns or throws into an answer (never throws). */
export async function answerOf(run: () => Promise<ChannelValue | void> | ChannelValue | void): Promise<ChannelAnswer> {
  try {
    return { ok: true, value: (await run()) ?? null };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    const kind = (error as { kind?: unknown }).kind;
    return { ok: false, message: error.message, errorName: error.name, ...(typeof kind === 'string' ? { errorKind: kind } : {}) };
  }
}

/** The answer's value, or the ChannelError that tells the caller what went wrong there. */
export function valueOf(answer: ChannelAnswer): ChannelValue {
  if (answer.ok) return answer.value;
  throw new ChannelError(answer.message, answer.errorName, answer.errorKind);
}
