/**
 * Sending the copies: `received` after delivery to an account (to every carbons-enabled session that did
 * not get the original), `sent` when one of its clients sends a message (to every other carbons-enabled
 * session, whether or not the sender enabled carbons, §6).
 */
import type { C2SSession, DeliverContext, RouterApi, SendContext, SessionDirectory, XmlElement } from '@service/plugin-api';
import { carbonsEnabled } from './carbon-state.js';
import { isCopyable, isFromMuc, isPrivate } from './eligibility.js';
import { carbonCopy, type CarbonDirection } from './forward.js';
import { NS_CARBONS } from './ns.js';

export class CarbonCopies {
  constructor(
    private readonly sessions: SessionDirectory,
    private readonly router: RouterApi,
  ) {}

  /**
   * The deliver layer: received copies after delivery. A message for an account none of whose sessions
   * enabled carbons (most of them) passes without an async frame.
   */
  onDeliver(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    const original = ctx.stanza;
    if (original.name !== 'message') return next();
    const copyable = isCopyable(original) && !isFromMuc(original);
    // §7: the receiving server removes <private/> before delivering to the recipient.
    if (isPrivate(original)) ctx.stanza = original.clone().removeChildren((c) => c.is('private', NS_CARBONS));
    // Which sessions got the message is known only after delivery: before it, any carbons-enabled one counts.
    if (!copyable || this.#noneWantCopies(ctx.to.bare, () => true)) return next();
    return this.#deliverThenCopy(ctx, next);
  }

  async #deliverThenCopy(ctx: DeliverContext, next: () => Promise<void>): Promise<void> {
    await next();
    if (ctx.delivered.length === 0) return;
    const skip = new Set(ctx.delivered);
    await this.#copy('received', ctx.stanza, ctx.to.bare, (s) => !skip.has(s));
  }

  /** The user_send layer: sent copies, then routing. */
  onSend(ctx: SendContext, next: () => Promise<void>): Promise<void> {
    const { stanza, session } = ctx;
    // A message to the sender's own account reaches its resources as received copies already.
    if (stanza.name !== 'message' || ctx.to === undefined || ctx.to.bare === session.account.bare || !isCopyable(stanza)) return next();
    const others = (s: C2SSession) => s !== session;
    if (this.#noneWantCopies(session.account.bare, others)) return next();
    return this.#copy('sent', stanza, session.account.bare, others).then(() => next());
  }

  /**
   * True when, as the directory knows without waiting, no session of the account would get a copy; false when
   * one would, or when the directory cannot tell without asking (a cluster peer).
   */
  #noneWantCopies(account: string, wanted: (s: C2SSession) => boolean): boolean {
    return this.sessions.byAccountNow?.(account)?.some((s) => getsCopy(s, wanted)) === false;
  }

  async #copy(direction: CarbonDirection, original: XmlElement, account: string, wanted: (s: C2SSession) => boolean): Promise<void> {
    for (const session of await this.sessions.byAccount(account)) {
      if (!getsCopy(session, wanted)) continue;
      await this.router.deliverToSession(session, carbonCopy(direction, original, account, session.jid.full));
    }
  }
}

/** Whether a session of the account gets a copy: open, carbons enabled, and one the caller wants. */
function getsCopy(session: C2SSession, wanted: (s: C2SSession) => boolean): boolean {
  return !session.closed && carbonsEnabled(session) && wanted(session);
}
