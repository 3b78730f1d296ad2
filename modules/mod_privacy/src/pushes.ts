/**
 * Privacy list pushes (XEP-0016 §2.2 rule 10, §2.5): when a list is created, edited or removed, each
 * connected resource of the account gets an IQ set naming it — the name only; a resource fetches the list
 * if it cares.
 */
import { randomHex, x, type Jid, type RouterApi, type SessionDirectory } from '@service/plugin-api';
import { queryElement } from './list-xml.js';

export class ListPushes {
  constructor(
    private readonly sessions: SessionDirectory,
    private readonly router: RouterApi,
  ) {}

  async push(account: Jid, listName: string): Promise<void> {
    for (const session of await this.sessions.byAccount(account.bare)) {
      if (session.closed) continue;
      const push = x('iq', { type: 'set', id: `push-${randomHex(6)}`, from: account.bare, to: session.jid.full }, queryElement(x('list', { name: listName })));
      await this.router.deliverToSession(session, push);
    }
  }
}
