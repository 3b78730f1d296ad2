/**
 * Traffic shaping of what a client sends (ejabberd's shapers): a token bucket over the bytes read from the
 * connection. A chunk is always handled; when it leaves the bucket in debt, the transport stops reading for
 * the time the bucket needs to refill, so the client is slowed by TCP's own flow control and never cut off.
 *
 * Kept small because every shaped connection has one: the definition is shared (it comes from the
 * configuration), the connection holds two numbers, and a timer exists only while reading is paused.
 */
import type { ShaperDefinition } from '../../access/shaper-rules.js';

/** How the transport stops and restarts reading its connection. */
export interface ReadControl {
  pause(): void;
  resume(): void;
}

export class Shaper {
  #tokens: number;
  #at = performance.now();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private definition: ShaperDefinition,
    private readonly control: ReadControl,
  ) {
    this.#tokens = definition.burst;
  }

  get paused(): boolean {
    return this.#timer !== undefined;
  }

  /** Counts bytes just read; pauses reading when the bucket is in debt, until it is not. */
  received(bytes: number): void {
    this.#refill();
    this.#tokens -= bytes;
    if (this.#tokens < 0 && !this.#timer) {
      this.control.pause();
      this.#schedule();
    }
  }

  /** Another shaper for the same connection (after authentication): the debt so far carries over, at the new rate. */
  change(definition: ShaperDefinition): void {
    this.#refill();
    this.definition = definition;
    this.#tokens = Math.min(this.#tokens, definition.burst);
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    if (this.#tokens >= 0) this.#resume();
    else this.#schedule();
  }

  /** No more shaping (the new shaper is none): a paused connection reads again at once. */
  stop(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    this.#resume();
  }

  /** The connection is gone: nothing to resume. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.definition.burst, this.#tokens + ((now - this.#at) * this.definition.rate) / 1000);
    this.#at = now;
  }

  #schedule(): void {
    this.#timer = setTimeout(this.#resume, Math.ceil((-this.#tokens * 1000) / this.definition.rate));
  }

  readonly #resume = (): void => {
    this.#timer = undefined;
    this.control.resume();
  };
}

/**
 * The shaper a connection should have now: `current` changed in place, a new one, or none (stopping
 * `current`, so that a paused connection reads again).
 */
export function reshape(current: Shaper | undefined, definition: ShaperDefinition | undefined, control: ReadControl): Shaper | undefined {
  if (!definition) {
    current?.stop();
    return undefined;
  }
  if (current) {
    current.change(definition);
    return current;
  }
  return new Shaper(definition, control);
}
