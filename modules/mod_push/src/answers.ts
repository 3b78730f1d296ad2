/**
 * The app servers' answers to notifications. A result is the app server taking it. An error disables
 * that push session, as ejabberd does: the app server no longer knows the node (the device uninstalled
 * the app, the token expired), and would refuse every notification after it; the client enables it
 * again at its next login if it still wants push. An error of type `wait` is a temporary refusal (the
 * app server is throttling) and keeps the push session.
 *
 * The answer names its push session by itself: it comes from the app server's JID (stamped by the
 * server), to the account's bare JID, with the node's hash in its id (notification.ts). So it is handled
 * wherever it arrives — any worker, any node — and never reaches the account's clients, which did not ask.
 */
import type { Jid, Logger, XmlElement } from '@service/plugin-api';
import { hashOfAnswerId } from './notification.js';
import type { PushStore } from './store.js';

export class PushAnswers {
  constructor(
    private readonly store: PushStore,
    private readonly logger: Logger,
  ) {}

  /**
   * The node hash when `stanza` answers one of the notifications, which were sent from the account's bare
   * JID: the caller checks that it is addressed to that bare JID.
   */
  hashOf(stanza: XmlElement): string | undefined {
    if (stanza.name !== 'iq') return undefined;
    const type = stanza.attr('type');
    if (type !== 'result' && type !== 'error') return undefined;
    return hashOfAnswerId(stanza.attr('id'));
  }

  /** Handles an answer `hashOf` recognized, from `appServer`. */
  async handle(stanza: XmlElement, hash: string, account: Jid, appServer: Jid): Promise<void> {
    if (stanza.attr('type') === 'result') {
      this.logger.debug({ account: account.bare, service: appServer.full }, 'the app server took the push notification');
      return;
    }
    const error = stanza.getChild('error');
    const type = error?.attr('type');
    const condition = error?.elements().find((e) => e.ns === 'urn:ietf:params:xml:ns:xmpp-stanzas' && e.local !== 'text')?.local ?? 'undefined-condition';
    if (type === 'wait') {
      this.logger.info({ account: account.bare, service: appServer.full, condition }, 'the app server refused a push notification for now');
      return;
    }
    let removed: number;
    try {
      removed = await this.store.disableHashed(account, appServer.full, hash);
    } catch (err) {
      // The app server's stream must not pay for it; its next error tries again.
      this.logger.error({ err, account: account.bare, service: appServer.full }, 'a refused push session could not be disabled');
      return;
    }
    if (removed > 0) this.logger.warn({ account: account.bare, service: appServer.full, condition, type }, 'the app server refused a push notification: push disabled for that node');
  }
}
