/**
 * The jabber:iq:privacy requests of an account (XEP-0016 §§2.3–2.8): list names, one list, the active
 * list of the requesting session, the default list, creating, replacing and removing lists — with the
 * errors the XEP names. Used by the IQ handlers and by the privacy service (no session there).
 */
import { StanzaError, x, type C2SSession, type Jid, type SessionDirectory, type XmlElement } from '@service/plugin-api';
import type { RosterApi } from '@service/mod_roster/api';
import { activeListOf, setActiveList } from './active-list.js';
import { listElement, listName, parseList, queryElement } from './list-xml.js';
import type { PrivacyList } from './model.js';
import type { ListPushes } from './pushes.js';
import type { PrivacyStore } from './store.js';

export class PrivacyRequests {
  constructor(
    private readonly store: PrivacyStore,
    private readonly sessions: SessionDirectory,
    private readonly pushes: ListPushes,
    /** mod_roster's service while it runs (read at each use: it may stop). */
    private readonly roster: () => RosterApi | undefined,
  ) {}

  async get(account: Jid, session: C2SSession | undefined, query: XmlElement): Promise<XmlElement> {
    const asked = query.elements();
    const privacy = await this.store.account(account);
    if (asked.length === 0) {
      const active = session && activeListOf(session);
      return queryElement(
        ...(active !== undefined ? [x('active', { name: active })] : []),
        ...(privacy.defaultName !== undefined ? [x('default', { name: privacy.defaultName })] : []),
        ...[...privacy.lists.keys()].sort().map((name) => x('list', { name })),
      );
    }
    if (asked.length > 1 || !asked[0]!.is('list')) throw new StanzaError('bad-request', 'ask for the list names, or for one list');
    const name = listName(asked[0]!);
    const list = privacy.lists.get(name);
    if (!list) throw new StanzaError('item-not-found', `there is no list '${name}'`);
    return queryElement(listElement(list));
  }

  async set(account: Jid, session: C2SSession | undefined, query: XmlElement): Promise<void> {
    const children = query.elements();
    if (children.length !== 1) throw new StanzaError('bad-request', 'a privacy set carries exactly one <active/>, <default/> or <list/>');
    const request = children[0]!;
    switch (request.local) {
      case 'active':
        return this.#setActive(account, session, request.attr('name'));
      case 'default':
        return this.#setDefault(account, session, request.attr('name'));
      case 'list':
        return request.elements().length === 0 ? this.#removeList(account, session, listName(request)) : this.#saveList(account, parseList(request));
      default:
        throw new StanzaError('bad-request', `<${request.local}/> is not a privacy request`);
    }
  }

  async #setActive(account: Jid, session: C2SSession | undefined, name: string | undefined): Promise<void> {
    if (!session) throw new StanzaError('bad-request', 'an active list belongs to a session');
    if (name !== undefined && !(await this.store.account(account)).lists.has(name)) throw new StanzaError('item-not-found', `there is no list '${name}'`);
    // §2.3: applied before the result is sent.
    setActiveList(session, name);
  }

  async #setDefault(account: Jid, session: C2SSession | undefined, name: string | undefined): Promise<void> {
    const privacy = await this.store.account(account);
    if (name !== undefined && !privacy.lists.has(name)) throw new StanzaError('item-not-found', `there is no list '${name}'`);
    if (name === privacy.defaultName) return;
    // §2.4: not while the current default applies to another connected resource (one without an active
    // list). The rule settles a conflict between the account's resources; an administrator's request
    // (privacy_set: no session) speaks for the account as a whole, as in ejabberd, and takes effect for them all.
    if (session && privacy.defaultName !== undefined && (await this.#others(account, session)).some((s) => activeListOf(s) === undefined)) {
      throw new StanzaError('conflict', 'the default list is in use by another resource');
    }
    await this.store.setDefault(account, name);
  }

  async #removeList(account: Jid, session: C2SSession | undefined, name: string): Promise<void> {
    const privacy = await this.store.account(account);
    if (!privacy.lists.has(name)) throw new StanzaError('item-not-found', `there is no list '${name}'`);
    // §2.8: not while it applies to another resource. The default list applies to the account as a whole
    // (offline delivery included): it is replaced or declined first.
    if (privacy.defaultName === name) throw new StanzaError('conflict', 'this is the default list: set or decline another default first');
    if ((await this.#others(account, session)).some((s) => activeListOf(s) === name)) throw new StanzaError('conflict', 'this list is active for another resource');
    await this.store.deleteList(account, name);
    if (session && activeListOf(session) === name) setActiveList(session, undefined);
    await this.pushes.push(account, name);
  }

  async #saveList(account: Jid, list: PrivacyList): Promise<void> {
    await this.#checkGroups(account, list);
    await this.store.saveList(account, list);
    await this.pushes.push(account, list.name);
  }

  /** §2.1: a group item names a group of the roster (<item-not-found/> otherwise), when there is a roster to ask. */
  async #checkGroups(account: Jid, list: PrivacyList): Promise<void> {
    const wanted = list.items.filter((item) => item.type === 'group').map((item) => item.value!);
    const roster = this.roster();
    if (!wanted.length || !roster) return;
    const groups = new Set((await roster.getRoster(account.bare)).flatMap((item) => item.groups));
    const missing = wanted.find((group) => !groups.has(group));
    if (missing !== undefined) throw new StanzaError('item-not-found', `there is no roster group '${missing}'`);
  }

  async #others(account: Jid, session: C2SSession | undefined): Promise<C2SSession[]> {
    return (await this.sessions.byAccount(account.bare)).filter((s) => s !== session && !s.closed);
  }
}
