/**
 * Delivery of stored messages (XEP-0160): to a session when it starts taking messages — available with a
 * non-negative priority, normally at its initial presence — in storage order, each stamped with a
 * XEP-0203 <delay/> from the server, through the router (so stream management counts them). A message is
 * deleted only once written to the session; if the session goes away meanwhile, the rest stays queued.
 */
import { Jid, x, type C2SSession, type Logger, type RouterApi, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import type { KeyedLock } from '@service/plugin-api';
import { withRemainingSeconds } from './expiry.js';
import type { OfflineStore, StoredMessage } from './store.js';

export const NS_DELAY = 'urn:xmpp:delay';

/** Rows read per round trip while draining a queue. */
const CHUNK_SIZE = 100;

/** A session offline messages may go to (XEP-0160: available, non-negative priority). */
export function takesMessages(session: C2SSession): boolean {
  return !session.closed && session.available && session.priority >= 0;
}

export class OfflineDelivery {
  constructor(
    private readonly store: OfflineStore,
    private readonly router: RouterApi,
    private readonly sessions: SessionDirectory,
    private readonly locks: KeyedLock,
    private readonly logger: Logger,
  ) {}

  async deliverTo(session: C2SSession): Promise<void> {
    const account = { user: session.account.user!, host: session.account.host };
    await this.locks.run(session.account.bare, () => this.#drain(session, account));
  }

  /** After a message was stored: an account that started taking messages meanwhile gets it now. */
  async deliverIfOnline(account: AccountKey): Promise<void> {
    const candidates = (await this.sessions.byAccount(new Jid(account.user, account.host, undefined).bare)).filter(takesMessages);
    if (!candidates.length) return;
    const best = candidates.reduce((a, b) => (b.priority > a.priority ? b : a));
    await this.deliverTo(best);
  }

  async #drain(session: C2SSession, account: AccountKey): Promise<void> {
    let after = 0;
    for (;;) {
      if (!takesMessages(session)) return;
      const chunk = await this.store.next(account, after, CHUNK_SIZE);
      if (chunk.unreadable.length) this.logger.warn({ account: `${account.user}@${account.host}`, ids: chunk.unreadable }, 'dropped offline messages whose stored XML does not parse');
      const done = [...chunk.unreadable];
      const now = Date.now();
      let interrupted = false;
      for (const message of chunk.messages) {
        if (message.expiresAt !== undefined && message.expiresAt <= now) {
          done.push(message.id);
          continue;
        }
        if (!takesMessages(session)) {
          interrupted = true;
          break;
        }
        await this.router.deliverToSession(session, delayed(message, account.host, now));
        // Closed while writing: the message may not have reached the client; it stays for next time.
        if (session.closed) {
          interrupted = true;
          break;
        }
        done.push(message.id);
      }
      await this.store.delete(account, done);
      if (interrupted || chunk.messages.length + chunk.unreadable.length < CHUNK_SIZE) return;
      after = chunk.lastId;
    }
  }
}

/**
 * The message with the server's XEP-0203 stamp. One that carries the server's stamp already (stored again
 * after a session ended without acknowledging it, see mod_stream_mgmt) keeps that one: it is older, and a
 * second stamp from the same server on each round would pile up.
 */
function delayed(message: StoredMessage, host: string, now: number): XmlElement {
  const stanza = withRemainingSeconds(message.stanza, now - message.createdAt);
  if (stanza.getChildren('delay', NS_DELAY).some((d) => d.attr('from') === host)) return stanza;
  return stanza.append(x('delay', { xmlns: NS_DELAY, from: host, stamp: new Date(message.createdAt).toISOString() }, 'Offline Storage'));
}
