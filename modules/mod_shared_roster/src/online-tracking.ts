/**
 * `@online@`: an account is online from its first available session to the end of its last one. When
 * that changes and its vhost has a group with @online@ members, the rosters of the accounts that see such
 * a group gain or lose it.
 *
 * Coming online is handled in user_send before mod_presence broadcasts (priority 60): the others' rosters
 * show the account before its presence arrives, and they answer its probes. No presence is sent on the
 * roster change itself: the account's own broadcast and probes take care of it. Going offline is handled
 * after the unavailable presence went out, or when the last session ended.
 *
 * Whether an account has an available session is asked of the session directory, which answers
 * asynchronously; changes of the set are made one at a time (`exclusive`), each deciding on what the
 * directory says then. The quick exits outside `exclusive` must not skip a change another one is about to
 * undo: a departure does not return early while an arrival of the account is under way (it may not have
 * added the account yet), nor an arrival while a departure is under way.
 */
import type { C2SSession, Middleware, SendContext } from '@service/plugin-api';
import type { Groups } from './groups.js';
import type { OnlineAccounts } from './members.js';
import type { Propagation } from './propagation.js';

/** Before mod_presence's broadcast (60), after mod_roster's subscriptions (40). */
export const ONLINE_TRACKING_PRIORITY = 50;

export interface TrackingDeps {
  readonly groups: Groups;
  readonly online: OnlineAccounts;
  readonly propagation: Propagation;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

export function onlineTracking({ groups, online, propagation, exclusive }: TrackingDeps) {
  const arriving = new InFlight();
  const leaving = new InFlight();
  const arrive = (bare: string, host: string) => {
    if (online.has(bare) && !leaving.has(bare)) return Promise.resolve();
    return arriving.during(bare, () =>
      exclusive(async () => {
        if (online.has(bare) || !(await online.availableNow(bare))) return;
        if (!groups.hasOnlineGroups(host)) return online.add(bare);
        await propagation.aroundContact(bare, async () => online.add(bare), { presence: false });
      }),
    );
  };
  const leave = (bare: string, host: string) => {
    if (!online.has(bare) && !arriving.has(bare)) return Promise.resolve();
    return leaving.during(bare, async () => {
      // Another available session keeps the account online: no need to wait for the others' changes.
      if (await online.availableNow(bare)) return;
      await exclusive(async () => {
        if (!online.has(bare) || (await online.availableNow(bare))) return;
        if (!groups.hasOnlineGroups(host)) return online.delete(bare);
        await propagation.aroundContact(bare, async () => online.delete(bare), { presence: false });
      });
    });
  };

  // Not async itself: every stanza a client sends crosses this layer, and few are broadcast presence.
  const middleware: Middleware<SendContext> = (ctx, next) => {
    const { stanza } = ctx;
    const type = stanza.attr('type');
    // Broadcast presence only: the kernel has recorded it on the session already.
    if (stanza.name !== 'presence' || ctx.to !== undefined || (type !== undefined && type !== 'unavailable')) return next();
    return broadcastPresence(ctx, next, type);
  };

  const broadcastPresence = async (ctx: SendContext, next: () => Promise<void>, type: string | undefined): Promise<void> => {
    const { session } = ctx;
    if (type === undefined) {
      await arrive(session.account.bare, session.account.host);
      return next();
    }
    await next();
    await leave(session.account.bare, session.account.host);
  };

  const sessionClosed = (session: C2SSession) => leave(session.account.bare, session.account.host);

  return { middleware, sessionClosed };
}

/** Accounts with a change under way (counted: several may be). */
class InFlight {
  readonly #count = new Map<string, number>();

  has(bare: string): boolean {
    return this.#count.has(bare);
  }

  async during(bare: string, work: () => Promise<void>): Promise<void> {
    this.#count.set(bare, (this.#count.get(bare) ?? 0) + 1);
    try {
      await work();
    } finally {
      const left = this.#count.get(bare)! - 1;
      if (left) this.#count.set(bare, left);
      else this.#count.delete(bare);
    }
  }
}
