/**
 * The blocklist operations, shared by the IQ handlers and the blocking service: store the change, push
 * it to the account's interested resources, and tell the contacts concerned by presence.
 */
import { Jid } from '@service/plugin-api';
import { isCovered } from './jid-match.js';
import type { PresenceOnChange } from './presence-on-change.js';
import type { BlocklistPushes } from './pushes.js';
import type { BlocklistStore } from './store.js';

export class Blocking {
  constructor(
    private readonly store: BlocklistStore,
    private readonly pushes: BlocklistPushes,
    private readonly presence: PresenceOnChange,
  ) {}

  async list(account: Jid): Promise<string[]> {
    return [...(await this.store.list(account))].sort();
  }

  /** Blocks normalized JIDs (see `normalize`). */
  async block(account: Jid, jids: readonly string[]): Promise<void> {
    const added = await this.store.add(account, jids);
    await this.pushes.push(account, 'block', jids);
    await this.presence.blocked(account, added);
  }

  /** Unblocks normalized JIDs, or everything when `jids` is undefined. */
  async unblock(account: Jid, jids: readonly string[] | undefined): Promise<void> {
    // An empty list is nothing to unblock; only `undefined` means everything.
    if (jids?.length === 0) return;
    const removed = await this.store.remove(account, jids);
    await this.pushes.push(account, 'unblock', jids ?? []);
    await this.presence.unblocked(account, removed);
  }

  async isBlocked(account: Jid, other: Jid): Promise<boolean> {
    return isCovered(await this.store.list(account), other);
  }
}

/** The text a JID is stored and compared as; undefined when it is no valid JID. */
export function normalize(jid: string): string | undefined {
  return Jid.tryParse(jid)?.full;
}
