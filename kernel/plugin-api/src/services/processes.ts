/**
 * The processes that make up this server on one machine (the `workers` option), as modules see them: which
 * one this is, and channels to call a module's code in another. A module whose state must live in one
 * process (group chat rooms: every occupant's stanzas meet in the room) keeps it in one worker and lets the
 * others reach it through a channel it registers (`channels` of what `start` returns). With one process
 * (the default) `count` is 1 and a call to process 1 runs the handler in place.
 *
 * What travels is JSON (ChannelValue): elements as their trees (treeOf / elementOf), JIDs as text.
 */

/** What a channel carries: JSON. */
export type ChannelValue = null | boolean | number | string | readonly ChannelValue[] | { readonly [key: string]: ChannelValue };

/**
 * A named endpoint of a module that the server's other processes call. Names are global: prefix them
 * with the module's name (`mod_muc.rooms`). The handler's answer goes back to the caller; what it throws
 * reaches the caller as a ChannelError with its message.
 */
export interface ChannelRegistration {
  readonly name: string;
  readonly handler: (payload: ChannelValue, from: number) => Promise<ChannelValue> | ChannelValue;
}

/** A call that failed in the other process (the handler threw), or could not reach it. */
export class ChannelError extends Error {
  constructor(
    message: string,
    /** The handler's error name (e.g. 'MucError'), when it threw one; 'unreachable' when no answer came. */
    readonly errorName: string,
    /** The handler error's `kind`, when it had one: enough to rebuild a module's typed error on this side. */
    readonly kind?: string,
  ) {
    super(message);
    this.name = 'ChannelError';
  }
}

export interface ProcessesApi {
  /** This process: 1…count. */
  readonly self: number;
  /** How many processes serve this node (1 without workers). */
  readonly count: number;
  /**
   * Calls the channel `name` in process `index` (this one included) and resolves with its answer. Rejects
   * with a ChannelError when the handler threw, when no such channel runs there, or when the process is
   * gone or does not answer within 30 s.
   */
  call(index: number, name: string, payload: ChannelValue): Promise<ChannelValue>;
}
