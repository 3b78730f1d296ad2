/**
 * Sends the notifications (notification.ts) for a message that a device of the account would miss: one
 * for a detached session (stream management keeps it while its connection is gone) to the push sessions
 * that very session enabled — for each message it gets while detached, and once when it becomes detached
 * with messages it never acknowledged — and one for a message stored offline to every push session of
 * the account.
 * Notifications are sent and not awaited by the message's path: the app server's answer comes back on
 * its own (answers.ts), and a failure to send is logged, never the sender's problem.
 */
import type { C2SSession, Jid, Logger, RouterApi, XmlElement } from '@service/plugin-api';
import { factsOf } from './incoming.js';
import { notificationIq, type MessageFacts, type SummaryPolicy } from './notification.js';
import type { PushSession, PushStore } from './store.js';

export class Notifier {
  constructor(
    private readonly store: PushStore,
    private readonly router: RouterApi,
    private readonly logger: Logger,
    private readonly policy: SummaryPolicy,
  ) {}

  /** `message` was queued for `session`, which is detached: wake the device that enabled push from it. */
  async forDetached(session: C2SSession, message: XmlElement): Promise<void> {
    const facts = factsOf(message, session.account);
    if (!facts) return;
    const pushes = (await this.store.forAccount(session.account)).filter((p) => p.sessionId === session.id);
    await this.#send(session.account, pushes, facts);
  }

  /**
   * `session` lost its connection and waits, detached, with `unacknowledged` written to it and never
   * acknowledged (it may never have reached the device): one notification, about the last of them worth
   * one, to the push sessions it enabled (ejabberd notifies when a session becomes pending the same way).
   */
  async forLostConnection(session: C2SSession, unacknowledged: readonly XmlElement[]): Promise<void> {
    const facts = unacknowledged.map((stanza) => factsOf(stanza, session.account)).findLast((f) => f !== undefined);
    if (!facts) return;
    const pushes = (await this.store.forAccount(session.account)).filter((p) => p.sessionId === session.id);
    await this.#send(session.account, pushes, facts);
  }

  /** `message` was stored offline for `account` (bare): wake every device that enabled push. */
  async forOffline(message: XmlElement, account: Jid): Promise<void> {
    const facts = factsOf(message, account);
    if (!facts) return;
    await this.#send(account, await this.store.forAccount(account), facts);
  }

  async #send(account: Jid, pushes: readonly PushSession[], facts: MessageFacts): Promise<void> {
    for (const push of pushes) {
      try {
        await this.router.route(notificationIq(account, push, facts, this.policy));
        this.logger.debug({ account: account.bare, service: push.service }, 'push notification sent');
      } catch (err) {
        // One app server that cannot be reached must not cost the others their notification.
        this.logger.error({ err, account: account.bare, service: push.service }, 'a push notification could not be sent');
      }
    }
  }
}
