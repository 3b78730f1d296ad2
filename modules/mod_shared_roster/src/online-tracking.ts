/**
 * `@online@`: an account is online from its first available session to the end of its last one. When
 * that changes and its vhost has a group with @online@ members, the rosters of the accounts that see such
 * a group gain or lose it.
 *
 * Coming online is handled in user_send before mod_presence broadcasts (priority 60): the others' rosters
 * show the account before its presence arrives, and they answer its probes. No presence is sent on the
 * roster change itself: the account's own broadcast and probes take care of it. Going offline is handled
 * after the unavailable presence went out, or when the last session ended.
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
  const arrive = async (bare: string, host: string) => {
    if (online.has(bare)) return;
    await exclusive(async () => {
      if (online.has(bare) || !online.availableNow(bare)) return;
      if (!groups.hasOnlineGroups(host)) return online.add(bare);
      await propagation.aroundContact(bare, async () => online.add(bare), { presence: false });
    });
  };
  const leave = async (bare: string, host: string) => {
    if (!online.has(bare) || online.availableNow(bare)) return;
    await exclusive(async () => {
      if (!online.has(bare) || online.availableNow(bare)) return;
      if (!groups.hasOnlineGroups(host)) return online.delete(bare);
      await propagation.aroundContact(bare, async () => online.delete(bare), { presence: false });
    });
  };

  const middleware: Middleware<SendContext> = async (ctx, next) => {
    const { stanza, session } = ctx;
    const type = stanza.attr('type');
    // Broadcast presence only: the kernel has recorded it on the session already.
    if (stanza.name !== 'presence' || ctx.to !== undefined || (type !== undefined && type !== 'unavailable')) return next();
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
